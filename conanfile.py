"""Conan 2 recipe of tdbg: the headers, tdbg::compiled (built by the consumer), and the optional
components s3, libtorch, engine (tdbg::engine, the engine compiled once by the package) and cli
(the `tdbg` command and tdbg::cli, with the engine), each built exactly when its option says so. tests/packaging/conan_create.py runs this recipe's steps in the test suite."""

import os

from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.files import copy


class TdbgConan(ConanFile):
    name = "tdbg"
    version = "0.1.0"
    description = "The training debugger for C++: smdebug's hook, trial and rules"
    license = "Apache-2.0"
    topics = ("machine-learning", "debugging", "smdebug", "header-only")
    settings = "os", "arch", "compiler", "build_type"
    options = {"s3": [True, False], "libtorch": [True, False], "engine": [True, False], "cli": [True, False]}
    default_options = {"s3": False, "libtorch": False, "engine": False, "cli": False}
    exports_sources = "CMakeLists.txt", "cmake/*", "include/*", "src/*", "tools/*", "LICENSE"

    @property
    def _components(self):
        """The CMake components the options ask for, in tdbg's names."""
        wanted = [name for name in ("s3", "libtorch", "engine", "cli") if self.options.get_safe(name)]
        if self.options.cli and "engine" not in wanted:
            wanted.insert(wanted.index("cli"), "engine")  # the command line links the engine
        return wanted

    @property
    def _compiled(self):
        """True when the package holds compiled code (the engine, the command line)."""
        return bool(self.options.engine or self.options.cli)

    def configure(self):
        # Only the engine and the command line are compiled; without them the package is headers
        # and CMake files.
        self.package_type = "static-library" if self._compiled else "header-library"

    def validate(self):
        check_min_cppstd(self, 17)

    def requirements(self):
        self.requires("xtensor/[>=0.24 <0.26]", transitive_headers=True)
        self.requires("pcre2/[>=10.40 <11]", transitive_headers=True, transitive_libs=True)
        self.requires("fmt/[>=9 <12]", transitive_headers=True)
        if self.options.s3:
            self.requires("libcurl/[>=7.75 <9]", transitive_headers=True)
            self.requires("pugixml/[>=1.11 <2]", transitive_headers=True)
        if self.options.libtorch:
            self.requires("libtorch/[>=1.13 <3]", transitive_headers=True)

    def layout(self):
        cmake_layout(self)

    def generate(self):
        toolchain = CMakeToolchain(self)
        # Every option explicit, so that the build machine never decides what the package holds.
        variables = toolchain.cache_variables
        for option in ("TDBG_BUILD_TESTS", "TDBG_BUILD_EXAMPLES", "TDBG_BUILD_BENCHMARKS", "TDBG_CUDA"):
            variables[option] = False
        variables["TDBG_INSTALL"] = True
        variables["TDBG_S3"] = bool(self.options.s3)
        variables["TDBG_LIBTORCH"] = bool(self.options.libtorch)
        variables["TDBG_BUILD_TOOLS"] = bool(self.options.cli)
        variables["TDBG_ENGINE"] = bool(self.options.engine)
        variables["TDBG_REQUIRED_COMPONENTS"] = ",".join(self._components)
        toolchain.generate()
        CMakeDeps(self).generate()

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        CMake(self).install()
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))

    def package_id(self):
        if not (self.info.options.engine or self.info.options.cli):
            # Headers and CMake files only: one package fits every configuration.
            self.info.settings.clear()

    def package_info(self):
        # Consumers use tdbg's own CMake package (tdbgConfig.cmake): find_package(tdbg) with
        # the components of the options, which finds the dependencies Conan provides.
        self.cpp_info.set_property("cmake_find_mode", "none")
        self.cpp_info.builddirs.append(os.path.join("share", "cmake", "tdbg"))
        # The components, for generators other than CMake's (the names of tdbgConfig.cmake).
        core = self.cpp_info.components["tdbg"]
        core.requires = ["xtensor::xtensor", "pcre2::pcre2", "fmt::fmt"]
        core.system_libs = ["pthread"]
        core.bindirs = []
        core.libdirs = []
        if self.options.s3:
            s3 = self.cpp_info.components["s3"]
            s3.requires = ["tdbg", "libcurl::libcurl", "pugixml::pugixml"]
            s3.defines = ["TDBG_HAS_S3=1"]
            s3.bindirs = []
            s3.libdirs = []
        if self.options.libtorch:
            libtorch = self.cpp_info.components["libtorch"]
            libtorch.requires = ["tdbg", "libtorch::libtorch"]
            libtorch.defines = ["TDBG_HAS_LIBTORCH=1"]
            libtorch.bindirs = []
            libtorch.libdirs = []
        if self._compiled:
            engine = self.cpp_info.components["engine"]
            engine.requires = ["tdbg"]
            engine.libs = ["tdbg_compiled"]
            engine.defines = ["TDBG_SEPARATE_COMPILATION"]
            engine.bindirs = []
        if self.options.cli:
            cli = self.cpp_info.components["cli"]
            cli.requires = ["engine"] + (["s3"] if self.options.s3 else [])
            cli.libs = ["tdbg_cli"]
            cli.defines = ["TDBG_SEPARATE_COMPILATION"]
            cli.bindirs = ["bin"]
