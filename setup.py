"""Builds the Cython extensions in dparse/_ext.

Every ``dparse/_ext/*.pyx`` becomes an extension module. The default build is optimized
(-O3, bounds checking and wraparound off); ``DPARSE_DEBUG=1`` turns bounds checking,
wraparound and initialized-check back on (``make test`` and CI build this way). The mode of the
last in-place build is kept in ``dparse/_ext/BUILD_MODE``; switching modes rebuilds everything.
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

    def run(self) -> None:
        super().run()
        if self.inplace:
            MODE_FILE.write_text(MODE + "\n")


extensions = [
    Extension(
        f"dparse._ext.{path.stem}",
        [str(path)],
        include_dirs=[numpy.get_include()],
        extra_compile_args=compile_args,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for path in sorted(Path("dparse/_ext").glob("*.pyx"))
]

setup(
    ext_modules=cythonize(extensions, compiler_directives=directives, force=MODE_CHANGED),
    cmdclass={"build_ext": ModeAwareBuildExt},
)
