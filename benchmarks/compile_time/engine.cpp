// The one translation unit that defines the engine (separate compilation).
#include <tdbg/src.hpp>
