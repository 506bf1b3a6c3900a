"""Build the engine's compiled modules; everything else about the project is in pyproject.toml.

The attack engine (``vtt_bridge/engine``) is plain Python that Cython compiles to C
when the project is installed: the same source, nothing written for Cython. It is
an accelerator only. Without a C compiler, or with ``VTT_BRIDGE_NO_EXTENSIONS=1``
set at install time, nothing is compiled and the engine runs as plain Python
(``vtt_bridge.engine.compiled()`` tells which modules run compiled).

Next to each compiled module the build writes the SHA-256 of the source it was
compiled from, so an engine module edited after installing runs from its source
until the next install (see ``vtt_bridge/engine/__init__.py``).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ENGINE = HERE / "vtt_bridge" / "engine"
# Keep in step with vtt_bridge/engine/__init__.py's COMPILED.
COMPILED = ("context", "dice", "foundry", "resolution", "steps", "tokens")


class BuildEngine(build_ext):
    """Compile in parallel; a module that fails to compile stays plain Python, with a warning."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if self.parallel is None:
            self.parallel = os.cpu_count() or 1

    def build_extension(self, ext: Extension) -> None:
        super().build_extension(ext)
        _stamp(ext, Path(self.get_ext_fullpath(ext.name)))

    def copy_extensions_to_source(self) -> None:  # an editable install: the modules go next to their source
        super().copy_extensions_to_source()
        build_py = self.get_finalized_command("build_py")
        for ext in self.extensions:
            _stamp(ext, Path(self._get_inplace_equivalent(build_py, ext)[0]))


def _stamp(ext: Extension, built: Path) -> None:
    """Write next to a compiled module the SHA-256 of the source it was compiled from."""
    if built.exists():  # an optional extension that failed to build leaves nothing
        source = HERE / Path(ext.sources[0]).with_suffix(".py")
        Path(f"{built}.sha256").write_text(hashlib.sha256(source.read_bytes()).hexdigest() + "\n")


def extensions() -> list[Extension]:
    if os.environ.get("VTT_BRIDGE_NO_EXTENSIONS", "") not in ("", "0"):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:  # pyproject's build requirements bring Cython; a bare setup.py run may not
        print("warning: Cython is not installed: the engine runs as plain Python")
        return []
    modules = [
        Extension(f"vtt_bridge.engine.{name}", [f"vtt_bridge/engine/{name}.py"], optional=True) for name in COMPILED
    ]
    return cythonize(
        modules,
        # Python's semantics, unchanged: type annotations are documentation, not C types.
        compiler_directives={"language_level": 3, "binding": True, "annotation_typing": False},
        quiet=True,
        nthreads=os.cpu_count() or 1,
    )


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildEngine})
