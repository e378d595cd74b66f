"""The kernel's mount namespace, as the shell lines its root setup step runs (scroll.kernel.sandbox
starts it: `unshare --mount ... sh -c SCRIPT`): hide the project and the log's dirs, bind the venv
back, one capped private tmpfs on /tmp, /var/tmp and /dev/shm, then chroot into a minimal root.

    setup_script(rt, limits, hide, keep, cgroup)   # the whole script (ends in `exec chroot ... "$@"`)
    mount_plan(hide, keep)                          # which hides go on top, which keeps are bound back
    minimal_root(rt, keep)                          # the lines that build <rt>/ns/root
"""
from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path
from typing import Any

SCRATCH_MOUNTS = ("/tmp", "/var/tmp", "/dev/shm")
_SYSTEM_DIRS = {Path(p) for p in ("/", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/proc",
                                  "/sys", "/dev", "/run", "/var", "/tmp", "/home", "/root", "/opt")}


def _inside(p: Path, root: Path) -> bool:
    return p == root or root in p.parents


def mount_plan(hide: list[Path], keep: list[Path]) -> tuple[list[Path], list[Path], list[Path]]:
    """(outer hides, keeps to bind back, inner hides): hides below a kept path are made after
    the kept path is bound back; a hide that contains the python's own prefix is fine (the
    prefix is kept), a hide that is a system dir or contains the runtime dir is dropped."""
    hide = sorted({Path(os.path.realpath(h)) for h in hide if Path(h).is_dir()},
                  key=lambda p: len(p.parts))
    keep = [Path(os.path.realpath(k)) for k in keep]
    chosen: list[Path] = []
    for h in hide:
        if h in _SYSTEM_DIRS or any(_inside(h, c) for c in chosen):
            continue
        chosen.append(h)
    outer = [h for h in chosen if not any(_inside(h, k) for k in keep)]
    inner = [h for h in chosen if h not in outer]
    back = [k for k in keep if any(_inside(k, h) and k != h for h in outer)]
    return outer, back, inner


def setup_script(rt: Path, limits: Any, hide: list[Path], keep: list[Path],
                 cgroup: Path | None) -> str:
    """The root part inside the new namespaces (see the module docstring)."""
    q = shlex.quote
    ns = rt / "ns"
    lines = ["set -e"]
    if cgroup is not None:
        lines.append(f"echo $$ > {q(str(cgroup / 'cgroup.procs'))}")
    lines.append("mount -t proc -o nosuid,nodev,noexec proc /proc")
    outer, back, inner = mount_plan(hide, keep)
    for i, k in enumerate(back):
        lines += [f"mkdir -p {q(str(ns / f'k{i}'))}", f"mount --bind {q(str(k))} {q(str(ns / f'k{i}'))}"]
    for h in outer:
        lines.append(f"mount -t tmpfs -o size=64k,mode=0755,nosuid,nodev scroll-hidden {q(str(h))}")
    for i, k in enumerate(back):
        lines += [f"mkdir -p {q(str(k))}", f"mount --move {q(str(ns / f'k{i}'))} {q(str(k))}"]
    for h in outer:
        lines.append(f"mount -o remount,ro {q(str(h))}")
    for h in inner:
        lines.append(f"mount -t tmpfs -o ro,size=4k,mode=0755,nosuid,nodev scroll-hidden {q(str(h))}")
    # a venv (or python) that lies under /tmp, /var/tmp or /dev/shm (a clone under /tmp): held aside
    # before the private scratch tmpfs covers it, then bound back at its own path, read-only
    below = [Path(os.path.realpath(k)) for k in keep
             if any(_inside(Path(os.path.realpath(k)), Path(m)) for m in SCRATCH_MOUNTS)]
    below = [k for k in dict.fromkeys(below) if not any(_inside(k, o) and k != o for o in below)]
    for i, k in enumerate(below):
        lines += [f"mkdir -p {q(str(ns / f's{i}'))}", f"mount --bind {q(str(k))} {q(str(ns / f's{i}'))}"]
    t = ns / "t"
    lines += [f"mkdir -p {q(str(t))}",
              f"mount -t tmpfs -o size={limits.tmp},mode=0700,nosuid,nodev scroll-tmp {q(str(t))}"]
    for i, m in enumerate(SCRATCH_MOUNTS):
        lines += [f"mkdir -m 1777 {q(str(t / str(i)))}",
                  f"if [ -d {m} ]; then mount --bind {q(str(t / str(i)))} {m}; fi"]
    for i, k in enumerate(below):
        lines += [f"mkdir -p -m 0755 {q(str(k))}", f"mount --move {q(str(ns / f's{i}'))} {q(str(k))}",
                  f"mount -o remount,bind,ro {q(str(k))}"]
    lines += [f"umount -l {q(str(t))}"] + minimal_root(rt, keep) + \
        ["umask 077", f"exec {q(shutil.which('chroot') or '/usr/sbin/chroot')} {q(str(ns / 'root'))} "
                      f"env -C {q(str(rt / 'work'))} \"$@\""]
    return "\n".join(lines)


ROOT_RO = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")  # the system's runtime
ROOT_DEV = ("null", "zero", "full", "random", "urandom")
ROOT_ETC = ("ld.so.cache", "localtime")                                    # copied, not bound


def minimal_root(rt: Path, keep: list[Path]) -> list[str]:
    """Shell lines that build the kernel's whole file system at <rt>/ns/root, entered by chroot: the
    system runtime read-only (ROOT_RO), a few /dev nodes, a fresh /proc, an /etc of copies, the private
    /tmp, /var/tmp and /dev/shm, the venv and Python prefix read-only, and its runtime dir. Nothing else
    of the host (no /home, /root, /var, /opt, /etc beyond ROOT_ETC, /sys, the checkout) exists there."""
    q = shlex.quote
    r = rt / "ns" / "root"
    lines = [f"mkdir -p {q(str(r))}", f"mount -t tmpfs -o size=4m,mode=0755,nosuid,nodev scroll-root {q(str(r))}"]

    def bind(src: str, ro: bool = True, rec: bool = True) -> None:
        dst = q(str(r) + src)
        lines.extend([f"if [ -L {q(src)} ]; then mkdir -p $(dirname {dst}); ln -s \"$(readlink {q(src)})\" {dst}; "
                      f"elif [ -d {q(src)} ]; then mkdir -p {dst}; mount {'--rbind' if rec else '--bind'} {q(src)} "
                      f"{dst}{f'; mount -o remount,bind,ro {dst}' if ro else ''}; fi"])

    for d in ROOT_RO:
        bind(d)
    for m in SCRATCH_MOUNTS:  # the private tmpfs, already on these paths here (with a venv bound back below)
        lines += [f"if [ -d {m} ]; then mkdir -p {q(str(r) + m)}; mount --rbind {m} {q(str(r) + m)}; fi"]
    extra = sorted({Path(os.path.realpath(k)) for k in keep if not any(
        _inside(Path(os.path.realpath(k)), Path(s)) for s in (*ROOT_RO, *SCRATCH_MOUNTS))}
                   - {Path(os.path.realpath(rt))})
    for k in extra:  # the venv (and a Python prefix outside /usr): read-only
        if k.is_dir():
            bind(str(k))
    bind(str(rt), ro=False, rec=False)  # conn file, ipc sockets; then the work dir (its own tmpfs)
    lines += [f"mount --bind {q(str(rt / 'work'))} {q(str(r) + str(rt / 'work'))}",
              f"mkdir -p {q(str(r / 'dev'))} {q(str(r / 'proc'))} {q(str(r / 'etc'))}"]
    for n in ROOT_DEV:
        lines += [f"touch {q(str(r / 'dev' / n))}", f"mount --bind /dev/{n} {q(str(r / 'dev' / n))}"]
    lines += [f"ln -s /proc/self/fd {q(str(r / 'dev' / 'fd'))}",
              f"mount -t proc -o nosuid,nodev,noexec proc {q(str(r / 'proc'))}"]
    for f in ROOT_ETC:
        lines += [f"if [ -e /etc/{f} ]; then cp -L /etc/{f} {q(str(r / 'etc' / f))}; fi"]
    lines += [f"mount -o remount,ro {q(str(r))}"]
    return lines
