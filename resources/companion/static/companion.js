// The companion page's little script: the pairing code from the link, and live updates.
"use strict";

function fillPairingCode() {
  const field = document.getElementById("pair-code");
  const code = decodeURIComponent(location.hash.slice(1));
  if (field && code && !field.value) field.value = code;
  if (code) history.replaceState(null, "", location.pathname);  // the code leaves the address bar
}

function typing() {
  const active = document.activeElement;
  return active && (active.tagName === "TEXTAREA" || active.tagName === "INPUT") && active.value !== "";
}

async function refreshMain() {
  const main = document.getElementById("main");
  if (!main || typing()) return;
  const response = await fetch(location.pathname + location.search, { headers: { Accept: "text/html" } });
  if (!response.ok) return;
  const page = new DOMParser().parseFromString(await response.text(), "text/html");
  const fresh = page.getElementById("main");
  if (fresh) main.replaceWith(fresh);
}

function followChanges() {
  if (!document.querySelector("main[data-live]")) return;
  const stream = new EventSource("/events");
  stream.addEventListener("changed", () => { refreshMain(); });
}

document.addEventListener("DOMContentLoaded", () => { fillPairingCode(); followChanges(); });
