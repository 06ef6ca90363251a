// The companion page's little script: the pairing code from the link, decisions held for Undo, live updates
// that never lose what is being typed, and more comment fields on Request changes.
"use strict";

const UNDO_MS = 5000;  // the desk's undo window (gui/undo.py UNDO_MS)
let held = null;       // the one decision waiting for its time: {action, body, card, timer}
let refreshDue = false;
let shown = 0;         // counts the swaps of <main>: a live update older than the page shown is read again

function fillPairingCode() {
  const field = document.getElementById("pair-code");
  const [code, fingerprint] = decodeURIComponent(location.hash.slice(1)).split("/");
  if (field && code && !field.value) field.value = code;
  const shown = document.getElementById("pair-fingerprint");
  if (shown && /^[0-9A-F]{64}$/.test(fingerprint || "")) {  // the desk's certificate, as the QR code holds it
    shown.querySelector("code").textContent = fingerprint.match(/../g).join(":");
    shown.hidden = false;
  }
  if (code) history.replaceState(null, "", location.pathname);  // the code leaves the address bar
}

// --- keeping what is typed across a refresh of <main> ---------------------------------------------------

function fieldsOf(main) {
  const found = new Map();
  for (const form of main.querySelectorAll("form[id]")) {
    const seen = {};
    for (const field of form.querySelectorAll("textarea, input:not([type=hidden]), select")) {
      const index = seen[field.name] = (seen[field.name] ?? -1) + 1;
      found.set(`${form.id}:${field.name}:${index}`, field);
    }
  }
  return found;
}

function changed(field) {
  if (field.tagName === "SELECT") return field.selectedIndex >= 0 && !field.options[field.selectedIndex].defaultSelected;
  return field.value !== field.defaultValue;
}

function snapshot(main) {
  const typed = new Map();
  for (const [key, field] of fieldsOf(main)) if (changed(field)) typed.set(key, field.value);
  const blocks = new Map();
  for (const form of main.querySelectorAll("form[id]")) blocks.set(form.id, form.querySelectorAll(".comment-block").length);
  const open = [...main.querySelectorAll("details[id][open]")].map((details) => details.id);
  return { typed, blocks, open };
}

function restore(main, kept) {
  for (const [id, count] of kept.blocks) {
    const form = document.getElementById(id);
    while (form && form.querySelectorAll(".comment-block").length < count) addCommentBlock(form, false);
  }
  for (const id of kept.open) document.getElementById(id)?.setAttribute("open", "");
  const fields = fieldsOf(main);
  for (const [key, value] of kept.typed) {
    const field = fields.get(key);
    if (field) field.value = value;
  }
}

const SAID = ":scope > .error, :scope > .notice, :scope > .kept";

function swapMain(html, keepSaid = false) {
  const main = document.getElementById("main");
  const fresh = new DOMParser().parseFromString(html, "text/html").getElementById("main");
  if (!main || !fresh) return false;
  const kept = snapshot(main);
  const said = [...main.querySelectorAll(SAID)];
  main.replaceWith(fresh);
  shown += 1;
  restore(fresh, kept);
  if (keepSaid && said.length && !fresh.querySelector(SAID)) {
    fresh.querySelector("h1")?.after(...said);  // a live update does not wipe out what a decision said
  }
  if (held) document.getElementById(held.card)?.classList.add("held");
  if (!keepSaid) fresh.querySelector(SAID)?.scrollIntoView({ block: "center" });
  return true;
}

function typing() {
  const active = document.activeElement;
  return Boolean(active && active.closest("#main") && /^(TEXTAREA|INPUT|SELECT)$/.test(active.tagName));
}

async function refreshMain() {
  if (typing()) { refreshDue = true; return; }
  refreshDue = false;
  const started = shown;
  const response = await fetch(location.pathname + location.search, {
    headers: { Accept: "text/html", "X-Companion-Live": "1" },  // a decision's notice is left to its own answer
  });
  const html = await response.text();
  if (shown !== started) { refreshMain(); return; }  // a decision's answer came meanwhile: read its page again
  if (response.ok) swapMain(html, true);
}

function followChanges() {
  if (!document.querySelector("main[data-live]")) return;
  const stream = new EventSource("/events");
  stream.addEventListener("changed", () => { refreshMain(); });
  document.addEventListener("focusout", () => {
    setTimeout(() => { if (refreshDue) refreshMain(); }, 0);  // after focus has moved on
  });
}

// --- decisions held for Undo ------------------------------------------------------------------------------

function bar(text) {
  const shown = document.getElementById("held");
  document.getElementById("held-text").textContent = text;
  shown.hidden = text === "";
}

async function send(decision) {
  try {
    const response = await fetch(decision.action, {
      method: "POST", body: decision.body, headers: { Accept: "text/html" }, credentials: "same-origin",
    });
    const html = await response.text();
    if (!swapMain(html)) { bar(`Not sent: the desk refused it (HTTP ${response.status}).`); return; }
    const landed = new URL(response.url);
    if (response.redirected && landed.pathname !== location.pathname) {
      history.replaceState(null, "", landed.pathname);  // the page it answered with, as without script
      document.title = new DOMParser().parseFromString(html, "text/html").title;
    }
  } catch (error) {
    document.getElementById(decision.card)?.classList.remove("held");
    bar("Not sent: the desk cannot be reached. Try again.");
    document.getElementById("held-undo").hidden = true;
  }
}

function commitHeld() {
  const decision = held;
  if (!decision) return;
  held = null;
  clearTimeout(decision.timer);
  bar("");
  send(decision);
}

function undo() {
  const decision = held;
  if (!decision) return;
  held = null;
  clearTimeout(decision.timer);
  bar("");
  const card = document.getElementById(decision.card);
  card?.classList.remove("held");
  card?.querySelector("button, textarea, input")?.focus();
}

function hold(event) {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.dataset.undo) return;  // no Undo: it posts at once
  event.preventDefault();
  commitHeld();  // one decision at a time, as at the desk: a newer one sends the one before
  const body = new URLSearchParams(new FormData(form, event.submitter));
  const card = form.dataset.card || form.id;
  held = { action: form.action, body, card, timer: setTimeout(commitHeld, UNDO_MS) };
  document.getElementById(card)?.classList.add("held");
  document.getElementById("held-undo").hidden = false;
  bar(`${form.dataset.undo} — Undo within ${UNDO_MS / 1000} s`);
  document.getElementById("held-undo").focus();
}

function sendOnLeave() {
  const decision = held;
  if (!decision) return;
  held = null;
  fetch(decision.action, { method: "POST", body: decision.body, credentials: "same-origin", keepalive: true });
}

// --- more comments on Request changes --------------------------------------------------------------------

function addCommentBlock(form, focus) {
  const blocks = form.querySelector(".comment-blocks");
  const first = blocks?.querySelector(".comment-block");
  if (!first) return;
  const block = first.cloneNode(true);
  for (const field of block.querySelectorAll("textarea")) { field.value = ""; field.defaultValue = ""; }
  for (const field of block.querySelectorAll("select")) field.selectedIndex = 0;
  blocks.append(block);
  if (focus) block.querySelector("textarea").focus();
}

function clicked(event) {
  const adder = event.target.closest("[data-add-comment]");
  if (adder) addCommentBlock(adder.closest("form"), true);
  if (event.target.closest("#held-undo")) undo();
}

document.documentElement.classList.add("js");
document.addEventListener("submit", hold);
document.addEventListener("click", clicked);
window.addEventListener("pagehide", sendOnLeave);
document.addEventListener("DOMContentLoaded", () => { fillPairingCode(); followChanges(); });
