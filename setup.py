"""Build the optional C scanner of workbench.syscalls; everything else is in pyproject.toml.

A failed compile never fails the install: the package then uses its pure-Python
reference scanner (also forced at run time with WORKBENCH_NO_NATIVE=1).
"""
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """build_ext that warns instead of failing when the extension cannot be compiled."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # noqa: BLE001 - any compiler/setup failure
            self._warn(exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001
            self._warn(exc)

    @staticmethod
    def _warn(exc):
        print(f"WARNING: the native strace scanner was not built ({exc}); "
              "workbench.syscalls falls back to its Python reference scanner", file=sys.stderr)


setup(
    ext_modules=[
        Extension(
            "workbench.syscalls._native",
            sources=["workbench/syscalls/_native.c"],
            extra_compile_args=["-O3", "-std=c99", "-Wall", "-Wno-missing-field-initializers"],
            optional=True,
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
