"""A stand-in agent that tells the test it started, then waits until it is stopped (standard library only).

    python held_agent.py PORT

It connects to the test's listener on PORT (that is the "started" signal), sends its process id as
one line, and reads until the test closes the connection or the loop ends the agent.
"""

from __future__ import annotations

import os
import socket
import sys

if __name__ == "__main__":
    with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=None) as line:
        line.sendall(f"{os.getpid()}\n".encode())
        line.recv(1)
