#pragma once
/// \file
/// A tensor's values as numpy prints them: `str()` of an array or a scalar, with numpy's
/// default print options (summarised beyond 1000 elements to 3 at each end of every dimension,
/// lines of at most 75 characters, at most 8 digits after a float's point, each float with the
/// fewest digits that give it back in its own type: float16, bfloat16 and float32 included).
/// `tdbg show` prints values with it; a program can call it without the command line.
///
///     tdbg::array_text(tensor_value(std::vector<float>{0.1F, 1.0F, 2.5F}))   // "[0.1 1.  2.5]"

#include <string>

#include "tdbg/config.hpp"
#include "tdbg/core/tensor_value.hpp"

namespace tdbg {

/// `value` as numpy's str() prints it: a scalar for a 0-d value, "[]" for an empty one, else
/// nested brackets, summarised when it has more than 1000 elements. Strings are quoted and
/// made safe for a terminal (core/text.hpp's terminal_safe).
[[nodiscard]] TDBG_DECL std::string array_text(const tensor_value& value);

/// The first element alone, as numpy prints a scalar ("0.5", "1e-05", "3", "True"); "[]" for
/// an empty value. What `tdbg show --reductions` prints of a reduction.
[[nodiscard]] TDBG_DECL std::string scalar_text(const tensor_value& value);

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/core/impl/array_text.ipp"
#endif
