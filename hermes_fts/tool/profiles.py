"""Hermes profiles, anchored where Hermes Agent anchors them (``_env.hermes_root``).

Profile ``default`` is ``<root>/state.db`` and profile ``NAME`` is
``<root>/profiles/NAME/state.db``, also while ``hermes -p NAME`` has pointed
``HERMES_HOME`` at a profile folder.  A profile name is checked before it
becomes a path, and a path is used only when it resolves inside the root (a
symlinked profile must not lead a model elsewhere).
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

from .._env import hermes_root
from ..store import file_has_session
from .errors import NoStore, ToolError

DEFAULT_PROFILE = "default"
_PROFILE_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def validate_profile(name: Any) -> str:
    """The canonical profile name; raises ``ToolError`` saying what a name looks like."""
    if not isinstance(name, str):
        raise ToolError("profile must be a profile name such as 'work' (letters, digits, _ or -)")
    if "\x00" in name:
        raise ToolError("profile name contains a NUL character; pass a plain name such as 'work'")
    canon = name.strip()
    if not canon:
        raise ToolError("profile name is empty; pass a profile name such as 'work' or omit it")
    if not _PROFILE_NAME_RE.fullmatch(canon):
        raise ToolError(
            f"invalid profile name {name!r}: use 1-64 letters, digits, '_' or '-' "
            "(no paths, no '/', no '..'); pass a profile name such as 'work' or omit profile"
        )
    return canon


def _profiles_dir() -> Path:
    return hermes_root() / "profiles"


def _profile_path(name: str) -> Path:
    """Where profile ``name`` keeps its store (the one place that spells it)."""
    if name == DEFAULT_PROFILE:
        return hermes_root() / "state.db"
    return _profiles_dir() / name / "state.db"


def nothing_there(path: Path) -> bool:
    """Whether no store file is at ``path``; False where this user cannot look (a
    folder closed to it), so that the open names that cause, not a missing store."""
    try:
        return not path.is_file()
    except OSError:
        return False


def _inside(path: Path, home: Path) -> bool:
    try:
        real = Path(os.path.realpath(path))
        real_home = Path(os.path.realpath(home))
    except (OSError, ValueError):
        return False
    return real == real_home or real_home in real.parents


def available_profiles() -> list[str]:
    """Profiles with a store, the default first, then by name."""
    home = hermes_root()
    names = []
    if _profile_path(DEFAULT_PROFILE).is_file():
        names.append(DEFAULT_PROFILE)
    root = _profiles_dir()
    try:
        entries = sorted(root.iterdir()) if root.is_dir() else []
    except OSError:
        entries = []
    for entry in entries:
        path = _profile_path(entry.name)
        if (
            _PROFILE_NAME_RE.fullmatch(entry.name)
            and entry.name != DEFAULT_PROFILE
            and path.is_file()
            and _inside(path, home)
        ):
            names.append(entry.name)
    return names


def profile_db_path(name: str) -> Path:
    """The ``state.db`` of a validated profile; raises ``ToolError`` when unusable."""
    canon = validate_profile(name)
    home = hermes_root()
    path = _profile_path(canon)
    if not _inside(path, home):
        raise NoStore(
            f"profile {canon!r} resolves outside {home}; pass a profile that lives in "
            "the Hermes profiles folder"
        )
    if nothing_there(path):
        known = ", ".join(available_profiles()) or "none"
        raise NoStore(
            f"profile {canon!r} does not exist (no state.db at {path}); "
            f"pass one of the existing profiles ({known}) or omit profile",
            person=f"profile {canon!r} does not exist (no state.db at {path}); "
            f"existing profiles: {known}",
        )
    return path


@functools.lru_cache(maxsize=16)
def _real_anchors(_hermes_home: str, _home_env: str) -> tuple[str, str]:
    """(real path of the default store, real profiles folder) for these anchors.

    Resolving them costs a few ``lstat`` per path component, on every tool
    call, so they are kept per ``HERMES_HOME`` and ``HOME`` (the arguments are
    the cache key; ``HOME`` is what ``Path.home()`` reads).  A Hermes folder
    re-pointed by a symlink while the process runs keeps its old name in
    ``link`` strings until the process restarts.
    """
    default = _profile_path(DEFAULT_PROFILE)
    return (
        os.path.join(os.path.realpath(default.parent), default.name),
        os.path.realpath(_profiles_dir()),
    )


def profile_of_file(path: str | None) -> str | None:
    """The profile whose store is the (real) path ``path``; None for any other file."""
    if not path:
        return None
    default_real, profiles_real = _real_anchors(
        os.environ.get("HERMES_HOME", ""), os.environ.get("HOME", "")
    )
    if path == default_real:
        return DEFAULT_PROFILE
    parent = os.path.dirname(path)
    if (
        os.path.basename(path) == "state.db"
        and os.path.dirname(parent) == profiles_real
        and _PROFILE_NAME_RE.fullmatch(os.path.basename(parent))
    ):
        return os.path.basename(parent)
    return None


def locate_profile(session_id: str, skip_file: str | None) -> tuple[str, Path] | None:
    """First profile (default first, then by name) whose store holds ``session_id``.

    ``skip_file`` is the real path of a store already searched.
    """
    seen = {skip_file} if skip_file else set()
    for name in available_profiles():
        path = _profile_path(name)
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        if file_has_session(path, session_id):
            return name, path
    return None
