"""Builds dparse's Cython extensions.

Every ``.pyx`` file under ``dparse/`` becomes an extension module named by its path
(``dparse/graph/cle.pyx`` is ``dparse.graph.cle``): each parser family's extensions sit in its
own subpackage, those several families share in ``dparse/_ext``. The default build is optimized
(-O3, bounds checking and wraparound off); ``DPARSE_DEBUG=1`` turns bounds checking,
wraparound and initialized-check back on (``make test`` and CI build this way). The mode of the
last in-place build is kept in ``dparse/_ext/BUILD_MODE``; switching modes rebuilds everything.
``DPARSE_NO_EXT=1`` leaves the extensions out: the make targets install the package that way
(pip's editable install compiles in a temporary folder, every time) and then compile in place
once, in the mode they need.
"""

import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("DPARSE_DEBUG", "") not in ("", "0")
MODE = "debug" if DEBUG else "optimized"
MODE_FILE = Path("dparse/_ext/BUILD_MODE")
MODE_CHANGED = not MODE_FILE.exists() or MODE_FILE.read_text().strip() != MODE
NO_EXT = os.environ.get("DPARSE_NO_EXT", "") not in ("", "0")

directives = {
    "language_level": "3",
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "nonecheck": False,
}
# No fused multiply-add contraction: a sum of products then rounds the same way on every CPU and
# at every -march (dparse/_ext/sparsevec.pyx), so that training gives the same model everywhere.
compile_args = (["-O1", "-g"] if DEBUG else ["-O3"]) + ["-ffp-contract=off"]


class ModeAwareBuildExt(build_ext):
    """build_ext that rebuilds everything when the build mode changed, then records it."""

    def finalize_options(self) -> None:
        super().finalize_options()
        if MODE_CHANGED and self.inplace:
            self.force = True
        if self.parallel is None:  # compile the extensions on every core (-j N overrides)
            self.parallel = os.cpu_count() or 1

    def run(self) -> None:
        super().run()
        if self.inplace:
            MODE_FILE.write_text(MODE + "\n")


extensions = [
    Extension(
        ".".join(path.with_suffix("").parts),
        [str(path)],
        include_dirs=[numpy.get_include()],
        extra_compile_args=compile_args,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for path in sorted(Path("dparse").rglob("*.pyx"))
]

setup(
    ext_modules=[] if NO_EXT else cythonize(
        extensions, compiler_directives=directives, force=MODE_CHANGED,
        nthreads=os.cpu_count() or 1),
    cmdclass={"build_ext": ModeAwareBuildExt},
)
