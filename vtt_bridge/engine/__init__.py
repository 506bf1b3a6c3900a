"""The sans-I/O attack engine: steps, decisions, context, dice, resolution.

Its modules are plain Python that Cython compiles to C when the project is
installed (``setup.py``): the same source, run faster; nothing in it is written
for Cython, and a plugin sees no difference. A module runs from its ``.py``
source instead when it was not compiled (no C compiler at install time), when
``VTT_BRIDGE_NO_EXTENSIONS=1`` is set, or when its source changed since it was
compiled (an edit, a ``git pull``: install again to recompile). :func:`compiled`
tells which run compiled.
"""

from __future__ import annotations

import hashlib
import os
import sys
import warnings
from importlib.machinery import EXTENSION_SUFFIXES, ModuleSpec
from importlib.util import spec_from_file_location

__all__ = ["COMPILED", "compiled"]

#: The modules ``setup.py`` compiles.
COMPILED = ("context", "dice", "foundry", "resolution", "steps", "tokens")

_HERE = os.path.dirname(os.path.abspath(__file__))


class _SourceWhenStale:
    """Import an engine module from its source unless its compiled form was built from that very source."""

    @staticmethod
    def find_spec(fullname: str, path: object = None, target: object = None) -> ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package != __name__ or name not in COMPILED:
            return None
        source = os.path.join(_HERE, f"{name}.py")
        if os.environ.get("VTT_BRIDGE_NO_EXTENSIONS", "") not in ("", "0"):
            return spec_from_file_location(fullname, source)
        for suffix in EXTENSION_SUFFIXES:
            built = os.path.join(_HERE, name + suffix)
            if not os.path.exists(built):
                continue
            try:
                with open(f"{built}.sha256") as f:
                    want = f.read().strip()
            except OSError:
                why = "has no record of the source it was compiled from"
            else:
                with open(source, "rb") as f:
                    if hashlib.sha256(f.read()).hexdigest() == want:
                        return None  # the compiled module, found the usual way
                why = "changed since it was compiled"
            warnings.warn(
                f"{fullname} {why}: running its source (install the project again to recompile it)", stacklevel=2
            )
            break
        return spec_from_file_location(fullname, source)


def compiled() -> dict[str, bool]:
    """Each engine module imported so far: whether it runs compiled."""
    found = {}
    for name in COMPILED:
        module = sys.modules.get(f"{__name__}.{name}")
        if module is not None:
            found[name] = not (module.__file__ or "").endswith(".py")
    return found


if _SourceWhenStale not in sys.meta_path:
    sys.meta_path.insert(0, _SourceWhenStale)
