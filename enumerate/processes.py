"""Processes of this machine: whether one is alive, and which PID namespace this one is
in (PIDs of other namespaces, such as other containers sharing a folder, mean nothing
here)."""
from __future__ import annotations

import os


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this machine (in this PID namespace); True
    when it exists but belongs to another user."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def pid_namespace() -> str:
    """This process's PID namespace: the inode number of /proc/self/ns/pid ("0" where
    there is none to read)."""
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "0"
