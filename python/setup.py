"""Builds the overlapscope wheel: the Python files in overlapscope/ and the
compiled overlapscope._core.

_core comes from a CMake build of this repository: the one in
$OVERLAPSCOPE_BUILD_DIR (default: the repository's build/) when it holds a
_core for this interpreter, else a build made now of just the module
(CMake, a C++20 compiler and the analyzer's Debian packages needed; the GUI,
agent, workloads and tests are left out). Nothing is downloaded."""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
REPO = Path(os.environ.get("OVERLAPSCOPE_SOURCE_DIR", HERE.parent))
# setuptools writes build/ and *.egg-info/ next to setup.py by default; an
# install must leave the checkout as it was, so they go to a scratch folder
# that is removed when this process ends (pip runs setup.py several times).
SCRATCH = Path(tempfile.mkdtemp(prefix="overlapscope-setup-"))
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)


def version() -> str:
    cmake = (REPO / "CMakeLists.txt").read_text()
    match = re.search(r"project\(overlapscope VERSION ([0-9.]+)", cmake)
    if not match:
        raise RuntimeError(f"no project version in {REPO / 'CMakeLists.txt'}")
    return match.group(1)


class BuildCore(build_ext):
    """Puts a CMake-built _core where the wheel expects the extension."""

    def build_extension(self, ext: Extension) -> None:
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        core = self.core()
        # A RelWithDebInfo build's module is mostly debug info (about 90 MB):
        # the wheel goes without it, which also makes packing it quick.
        strip = shutil.which("strip")
        if strip:
            subprocess.run([strip, "--strip-debug", "-o", str(target), str(core)], check=True)
        else:
            shutil.copyfile(core, target)

    def core(self) -> Path:
        name = "_core" + sysconfig.get_config_var("EXT_SUFFIX")
        given = os.environ.get("OVERLAPSCOPE_BUILD_DIR")
        for build in [Path(given)] if given else [REPO / "build"]:
            built = build / "python" / "overlapscope" / name
            if built.exists():
                print(f"overlapscope: using {built}")
                return built
        if given:
            raise RuntimeError(f"OVERLAPSCOPE_BUILD_DIR={given} holds no python/overlapscope/{name}")
        return self.cmake_build(name)

    def cmake_build(self, name: str) -> Path:
        build = Path(self.build_temp).resolve() / "cmake"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        subprocess.run(
            ["cmake", "-S", str(REPO), "-B", str(build), *generator, "-DCMAKE_BUILD_TYPE=Release",
             f"-DPython3_EXECUTABLE={sys.executable}", "-DOSC_BUILD_PYTHON=ON", "-DOSC_BUILD_GUI=OFF",
             "-DOSC_BUILD_AGENT=OFF", "-DOSC_BUILD_WORKLOADS=OFF", "-DOSC_BUILD_FUZZERS=OFF", "-DBUILD_TESTING=OFF"],
            check=True,
        )
        subprocess.run(["cmake", "--build", str(build), "--target", "osc_python_core", "-j", str(os.cpu_count() or 2)],
                       check=True)
        return build / "python" / "overlapscope" / name


setup(
    version=version(),
    ext_modules=[Extension("overlapscope._core", sources=[])],
    cmdclass={"build_ext": BuildCore},
    options={"build": {"build_base": str(SCRATCH / "build")}, "egg_info": {"egg_base": str(SCRATCH)}},
)
