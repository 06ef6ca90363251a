"""Which addresses the companion page may listen on: this computer's own, one at a time.

127.0.0.1 comes first: only this computer reaches it, so it is the address for the person's own SSH
or VPN tunnel. A LAN address lets the phones of that network reach it. Every interface at once
(0.0.0.0 or ::) lets any network reach it: allowed only when the person says so explicitly.
"""

from __future__ import annotations

import ipaddress

from ralph_desk.project.companion_home import ALL_INTERFACES, LOOPBACK

TUNNEL_NOTE = (
    "127.0.0.1: only this computer can open the page. Reach it from the phone through your own "
    "SSH or VPN tunnel, e.g. ssh -L {port}:127.0.0.1:{port} this-computer."
)
LAN_NOTE = "{host}: phones on that network can open the page (it still needs pairing)."
ALL_NOTE = (
    "Every interface ({host}): ANY network this computer is on (a café's Wi-Fi, a VPN, a public "
    "address) can reach the page. Pairing still guards it, but prefer one address."
)


def choosable_addresses() -> list[str]:
    """This computer's addresses the page can listen on: 127.0.0.1 first, then IPv4, then IPv6."""
    from ralph_desk.http_serving import interface_addresses  # uvicorn loads only when addresses are asked

    found: set[ipaddress.IPv4Address | ipaddress.IPv6Address] = set()
    for text in interface_addresses():
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            continue
        # A link-local IPv6 address needs its interface named (fe80::1%eth0) to bind: not offered.
        if not (address.is_link_local or address.is_multicast or address.is_unspecified):
            found.add(address)
    found.discard(ipaddress.ip_address(LOOPBACK))
    ordered = sorted(found, key=lambda address: (address.version, address.is_loopback, address))
    return [LOOPBACK, *(str(address) for address in ordered)]


def address_problem(host: str, all_interfaces: bool, known: list[str] | None = None) -> str:
    """Why the page may not listen on `host` ("" when it may); `known`: this computer's addresses."""
    if host in ALL_INTERFACES:
        if all_interfaces:
            return ""
        return (
            f"{host} listens on every interface: any network this computer is on could reach the page; "
            "pick one of this computer's addresses, or say so explicitly (--all-interfaces)"
        )
    addresses = choosable_addresses() if known is None else known
    try:
        shown = str(ipaddress.ip_address(host))
    except ValueError:
        shown = host
    if shown in addresses:
        return ""
    return f"{host} is not an address of this computer; allowed: {', '.join(addresses)}"


def note_for(host: str, port: int) -> str:
    """What listening on `host` means, in a line for the person."""
    if host in ALL_INTERFACES:
        return ALL_NOTE.format(host=host)
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        return ""
    if loopback:
        return TUNNEL_NOTE.format(port=port)
    return LAN_NOTE.format(host=host)
