// A file that registers a custom rule (as a team's rule library does).
#include <tdbg/rules/registry.hpp>
#include <tdbg/rules/rule.hpp>

namespace {

class big_loss : public tdbg::rules::rule<big_loss> {
public:
    static constexpr std::string_view rule_name = "BigLoss";
    big_loss(tdbg::trial base, const tdbg::rules::rule_params& params)
        : rule(std::move(base), params), threshold_(params.get("threshold", 10.0)) {}
    [[nodiscard]] bool invoke_at_step(std::int64_t step) const {
        return tdbg::rules::scalar_of(value("loss", step)) > threshold_;
    }

private:
    double threshold_;
};

const tdbg::rules::registrar<big_loss> registration{"BigLoss"};

} // namespace
