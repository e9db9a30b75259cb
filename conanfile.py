"""Conan 2 recipe of tdbg: a header-only library; the package is its CMake install."""

from conan import ConanFile
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy
import os


class TdbgConan(ConanFile):
    name = "tdbg"
    version = "0.1.0"
    description = "The training debugger for C++: smdebug's hook, trial and rules"
    license = "Apache-2.0"
    topics = ("machine-learning", "debugging", "smdebug", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    options = {"s3": [True, False]}
    default_options = {"s3": False}
    exports_sources = "CMakeLists.txt", "cmake/*", "include/*", "LICENSE"
    no_copy_source = True

    def requirements(self):
        self.requires("xtensor/0.24.7", transitive_headers=True)
        self.requires("pcre2/10.42", transitive_headers=True, transitive_libs=True)
        self.requires("fmt/9.1.0", transitive_headers=True)
        if self.options.s3:
            self.requires("libcurl/[>=7.75 <9]", transitive_headers=True)
            self.requires("pugixml/1.13", transitive_headers=True)

    def layout(self):
        cmake_layout(self)

    def generate(self):
        toolchain = CMakeToolchain(self)
        for option in ("TDBG_BUILD_TESTS", "TDBG_BUILD_EXAMPLES", "TDBG_BUILD_BENCHMARKS", "TDBG_BUILD_TOOLS"):
            toolchain.cache_variables[option] = False
        toolchain.cache_variables["TDBG_INSTALL"] = True
        toolchain.generate()

    def package(self):
        # The same install the repository's consumer tests use (tests/cmake_find_package).
        cmake = CMake(self)
        cmake.configure()
        cmake.install()
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))

    def package_id(self):
        self.info.clear()
        self.info.options.s3 = self.options.s3

    def package_info(self):
        # Consumers get tdbg's own CMake package (tdbg::tdbg, and tdbg::s3 with the s3 option).
        self.cpp_info.set_property("cmake_find_mode", "none")
        self.cpp_info.builddirs.append(os.path.join("share", "cmake", "tdbg"))
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
