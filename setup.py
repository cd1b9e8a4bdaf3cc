"""Builds the Cython extensions in dparse/_ext.

Every ``dparse/_ext/*.pyx`` becomes an extension module. The default build is optimized
(-O3, bounds checking and wraparound off); ``DPARSE_DEBUG=1`` turns bounds checking,
wraparound and initialized-check back on (CI builds this way).
"""

import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("DPARSE_DEBUG", "") not in ("", "0")

directives = {
    "language_level": "3",
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "nonecheck": False,
}
compile_args = ["-O0", "-g"] if DEBUG else ["-O3"]

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

setup(ext_modules=cythonize(extensions, compiler_directives=directives))
