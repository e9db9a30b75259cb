"""Builds and runs a small consumer of the tdbg Conan package: the engine compiled once
(tdbg::compiled), and the components of the package's options (the `tdbg` command with cli)."""

import os

from conan import ConanFile
from conan.tools.build import can_run
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout


class TdbgTestConan(ConanFile):
    settings = "os", "arch", "compiler", "build_type"

    def requirements(self):
        self.requires(self.tested_reference_str)

    def layout(self):
        cmake_layout(self)

    def generate(self):
        options = self.dependencies["tdbg"].options
        toolchain = CMakeToolchain(self)
        components = [name for name in ("s3", "libtorch", "engine", "cli") if options.get_safe(name)]
        if "cli" in components and "engine" not in components:
            components.insert(components.index("cli"), "engine")  # cli comes with the engine
        toolchain.cache_variables["TDBG_TEST_COMPONENTS"] = ";".join(components)
        toolchain.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def test(self):
        if can_run(self):
            binary = os.path.join(self.cpp.build.bindir, "tdbg_test_package")
            self.run(f"{binary} {os.path.join(self.build_folder, 'run')}", env="conanrun")
