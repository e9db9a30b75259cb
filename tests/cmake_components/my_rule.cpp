// A rule of the consumer's own, registered by name: tdbg_add_cli() links it into `tdbg`, and
// `my_tdbg rules --list` must name it.
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "tdbg/rules/registry.hpp"
#include "tdbg/rules/rule.hpp"
#include "tdbg/rules/values.hpp"

namespace {

class consumer_rule : public tdbg::rules::rule<consumer_rule> {
public:
    static constexpr std::string_view rule_name = "ConsumerRule";

    consumer_rule(tdbg::trial base, const tdbg::rules::rule_params& params) : rule(std::move(base), params) {}

    [[nodiscard]] std::vector<tdbg::rules::tensor_request> required_tensors(std::int64_t /*step*/) const { return {}; }

    [[nodiscard]] tdbg::rules::verdict invoke_at_step(std::int64_t /*step*/,
                                                      const tdbg::rules::step_inputs& /*inputs*/) const {
        return false;
    }
};

const tdbg::rules::registrar<consumer_rule> registration{"ConsumerRule"};

} // namespace
