#!/usr/bin/env python3
"""What `conan create . -o 'tdbg/*:s3=...' ...` does with conanfile.py and test_package/, without Conan.

The parts of Conan 2's API the recipes use are stand-ins here that do Conan's work: the recipe's
files (exports_sources) are copied into a fresh source tree, its own configure, validate,
requirements, generate, build, package, package_id and package_info run unchanged, CMakeToolchain's
cache variables become the configure arguments of a clean build tree, CMake.install() installs into
the package folder; then test_package/conanfile.py generates, builds against the package and runs
its test. Dependencies come from the machine (Conan would build or download them).

Usage: conan_create.py --recipe DIR --work DIR --generator G [--option s3=True ...]
                       [--cmake-arg -DX=Y ...] [--check-script tests/packaging/check_package.cmake]
"""

import argparse
import fnmatch
import importlib.util
import os
import shutil
import subprocess
import sys
import types

ARGS = None


def run(command, cwd=None):
    print("+", " ".join(command), flush=True)
    subprocess.run(command, cwd=cwd, check=True)


class Options:
    """self.options: attributes, get_safe()."""

    def __init__(self, values):
        self.__dict__.update(values)

    def get_safe(self, name, default=None):
        return self.__dict__.get(name, default)


class Settings:
    def __init__(self):
        self.cleared = False

    def clear(self):
        self.cleared = True


class ConanFile:
    """The attributes of conan.ConanFile the recipes use."""

    def __init__(self, options, source_folder, build_folder, package_folder):
        self.options = Options(options)
        self.source_folder = source_folder
        self.build_folder = build_folder
        self.package_folder = package_folder
        self.requires_seen = []
        self.cache_variables = {}
        self.cpp_info = CppInfo()
        self.cpp = types.SimpleNamespace(build=types.SimpleNamespace(bindir=build_folder))
        self.settings = types.SimpleNamespace(compiler=types.SimpleNamespace(cppstd="17"))
        self.info = types.SimpleNamespace(options=Options(options), settings=Settings())
        self.dependencies = {}
        self.tested_reference_str = "tdbg/0.1.0"

    def requires(self, reference, **_traits):
        self.requires_seen.append(reference)

    def run(self, command, env=None):
        print("+", command, flush=True)
        subprocess.run(command, shell=True, check=True)


class Component:
    def __init__(self):
        self.requires, self.defines, self.libs, self.system_libs = [], [], [], []
        self.bindirs, self.libdirs = ["bin"], ["lib"]


class CppInfo(Component):
    def __init__(self):
        super().__init__()
        self.builddirs = []
        self.properties = {}
        self.components = {}

    def set_property(self, name, value):
        self.properties[name] = value

    def __getattr__(self, name):
        raise AttributeError(name)


class ComponentMap(dict):
    def __missing__(self, key):
        self[key] = Component()
        return self[key]


class CMakeToolchain:
    def __init__(self, conanfile):
        self.conanfile = conanfile
        self.cache_variables = {}

    def generate(self):
        self.conanfile.cache_variables.update(self.cache_variables)


class CMakeDeps:
    def __init__(self, conanfile):
        self.conanfile = conanfile

    def generate(self):
        pass


def cmake_value(value):
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return str(value)


class CMake:
    def __init__(self, conanfile):
        self.conanfile = conanfile

    def configure(self):
        c = self.conanfile
        # shutil.rmtree keeps the build tree clean per conan create, as Conan's build folder is.
        arguments = [f"-D{name}={cmake_value(value)}" for name, value in c.cache_variables.items()]
        run(["cmake", "-S", c.source_folder, "-B", c.build_folder, "-G", ARGS.generator,
             "-DCMAKE_BUILD_TYPE=Release"] + arguments + c.extra_cmake_args)

    def build(self):
        run(["cmake", "--build", self.conanfile.build_folder, "--parallel", "2"])

    def install(self):
        run(["cmake", "--install", self.conanfile.build_folder, "--prefix", self.conanfile.package_folder])


def check_min_cppstd(conanfile, version):
    if int(conanfile.settings.compiler.cppstd) < int(version):
        raise SystemExit(f"check_min_cppstd: {version} needed")
    conanfile.checked_cppstd = version


def can_run(_conanfile):
    return True


def copy(_conanfile, pattern, src, dst):
    os.makedirs(dst, exist_ok=True)
    for name in fnmatch.filter(os.listdir(src), pattern):
        shutil.copy2(os.path.join(src, name), dst)


def install_stand_ins():
    """Makes `from conan... import ...` find the stand-ins above."""
    modules = {
        "conan": {"ConanFile": ConanFile},
        "conan.tools": {},
        "conan.tools.build": {"check_min_cppstd": check_min_cppstd, "can_run": can_run},
        "conan.tools.cmake": {"CMake": CMake, "CMakeDeps": CMakeDeps, "CMakeToolchain": CMakeToolchain,
                              "cmake_layout": lambda _conanfile: None},
        "conan.tools.files": {"copy": copy},
    }
    for name, members in modules.items():
        module = types.ModuleType(name)
        module.__dict__.update(members)
        sys.modules[name] = module


def load_recipe(path, class_name):
    spec = importlib.util.spec_from_file_location(class_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, class_name)


def make(recipe_class, options, source, build, package):
    recipe = recipe_class.__new__(recipe_class)
    ConanFile.__init__(recipe, options, source, build, package)
    recipe.extra_cmake_args = ARGS.cmake_arg
    recipe.cpp_info.components = ComponentMap()
    return recipe


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--generator", default="Ninja")
    parser.add_argument("--option", action="append", default=[])
    parser.add_argument("--cmake-arg", action="append", default=[])
    parser.add_argument("--check-script", required=True)
    ARGS = parser.parse_args()
    install_stand_ins()

    recipe_class = load_recipe(os.path.join(ARGS.recipe, "conanfile.py"), "TdbgConan")
    options = dict(recipe_class.default_options)
    for assignment in ARGS.option:
        name, value = assignment.split("=")
        if name not in options or value not in ("True", "False"):
            raise SystemExit(f"unknown option {assignment}")
        options[name] = value == "True"

    work = os.path.abspath(ARGS.work)
    shutil.rmtree(work, ignore_errors=True)
    source, build, package = (os.path.join(work, part) for part in ("source", "build", "package"))
    # conan export: only exports_sources reach the source tree.
    for pattern in recipe_class.exports_sources:
        for root, _dirs, files in os.walk(ARGS.recipe):
            for name in files:
                relative = os.path.relpath(os.path.join(root, name), ARGS.recipe)
                if fnmatch.fnmatch(relative, pattern):
                    os.makedirs(os.path.dirname(os.path.join(source, relative)), exist_ok=True)
                    shutil.copy2(os.path.join(root, name), os.path.join(source, relative))

    recipe = make(recipe_class, options, source, build, package)
    recipe.configure()
    recipe.validate()
    if getattr(recipe, "checked_cppstd", None) != 17:
        raise SystemExit("the recipe does not check_min_cppstd(17)")
    recipe.requirements()
    for reference in recipe.requires_seen:
        if "[" not in reference:
            raise SystemExit(f"the recipe pins {reference}: use a version range")
    recipe.generate()
    recipe.build()
    recipe.package()
    recipe.package_id()
    compiled = bool(options["engine"] or options["cli"])
    if recipe.info.settings.cleared == compiled:
        raise SystemExit("package_id: settings must count exactly when the package has compiled parts (engine, cli)")
    recipe.package_info()

    # package_info's components are the CMake components of the installed package (cli comes
    # with the engine it links).
    names = ("s3", "libtorch", "engine", "cli")
    components = [name for name in names if options[name] or (name == "engine" and options["cli"])]
    absent = [name for name in names if name not in components]
    declared = sorted(set(recipe.cpp_info.components) - {"tdbg"})
    if declared != sorted(components):
        raise SystemExit(f"package_info declares the components {declared}, the options ask for {components}")
    run(["cmake", f"-DPREFIX={package}", "-DCMAKEDIR=share/cmake/tdbg", f"-DCOMPONENTS={','.join(components)}",
         f"-DABSENT={','.join(absent)}", "-P", ARGS.check_script])

    # test_package: built against the package, on a machine where what the package lacks is absent.
    test_class = load_recipe(os.path.join(ARGS.recipe, "test_package", "conanfile.py"), "TdbgTestConan")
    test_build = os.path.join(work, "test_package")
    test = make(test_class, {}, os.path.join(ARGS.recipe, "test_package"), test_build, None)
    test.dependencies = {"tdbg": types.SimpleNamespace(options=Options(options))}
    test.extra_cmake_args = ARGS.cmake_arg + [f"-DCMAKE_PREFIX_PATH={package}"]
    if not options["s3"]:
        test.extra_cmake_args += ["-DCMAKE_DISABLE_FIND_PACKAGE_CURL=ON", "-DCMAKE_DISABLE_FIND_PACKAGE_pugixml=ON"]
    if not options["libtorch"]:
        test.extra_cmake_args.append("-DCMAKE_DISABLE_FIND_PACKAGE_Torch=ON")
    test.requirements()
    test.generate()
    test.build()
    test.test()
    print(f"conan create with {options}: built, packaged, test_package passed")


if __name__ == "__main__":
    main()
