#pragma once
/// \file
/// The Catch2 that tdbg's matchers (tdbg/integrations/catch2.hpp and catch2_diff.hpp)
/// build on: the one the test included first, else whichever is installed, v3's
/// templated matchers (`catch2/matchers/catch_matchers_templated.hpp`) or v2's single
/// header (`catch2/catch.hpp`).

#if !defined(CATCH_VERSION_MAJOR) && !defined(CATCH_MATCHERS_TEMPLATED_HPP_INCLUDED)
#if __has_include(<catch2/matchers/catch_matchers_templated.hpp>)
#include <catch2/matchers/catch_matchers_templated.hpp>
#elif __has_include(<catch2/catch.hpp>)
#include <catch2/catch.hpp>
#else
#error "tdbg's Catch2 matchers (tdbg/integrations/catch2.hpp, catch2_diff.hpp) need Catch2: v2's <catch2/catch.hpp> or v3's <catch2/matchers/...>"
#endif
#endif

// Catch2 v3 included by the test, without its templated matchers.
#if defined(CATCH_VERSION_MAJOR) && CATCH_VERSION_MAJOR >= 3 && !defined(CATCH_MATCHERS_TEMPLATED_HPP_INCLUDED)
#include <catch2/matchers/catch_matchers_templated.hpp>
#endif
