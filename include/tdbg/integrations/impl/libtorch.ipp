#pragma once
/// \file
/// Definitions of tdbg/integrations/libtorch.hpp: included by it when header-only, compiled once
/// by tdbg/integrations/src/libtorch.hpp under TDBG_SEPARATE_COMPILATION.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <torch/nn/module.h>
#include <torch/types.h>

#include "tdbg/core/dtype.hpp"
#include "tdbg/core/error.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/integrations/detail/libtorch_batch.hpp"
#include "tdbg/integrations/libtorch.hpp"
#include "tdbg/integrations/torch_dtype.hpp"
#include "tdbg/reduce/convention.hpp"

namespace tdbg {

namespace detail {

TDBG_DECL std::string python_class_name(std::string_view type_name) {
    // Drop everything inside <...> and (...): template arguments, "(anonymous namespace)".
    std::string flat;
    int depth = 0;
    for (const char c : type_name) {
        if (c == '<' || c == '(') {
            ++depth;
        } else if ((c == '>' || c == ')') && depth > 0) {
            --depth;
        } else if (depth == 0 && c != ' ') {
            flat.push_back(c);
        }
    }
    const auto colons = flat.rfind("::");
    std::string name = colons == std::string::npos ? flat : flat.substr(colons + 2);
    constexpr std::string_view impl = "Impl";
    if (name.size() > impl.size() && name.compare(name.size() - impl.size(), impl.size(), impl) == 0) {
        name.resize(name.size() - impl.size());
    }
    return name.empty() ? std::string(type_name) : name;
}

} // namespace detail

TDBG_DECL std::string torch_class_name(const torch::nn::Module& module) {
    return detail::python_class_name(module.name());
}

TDBG_DECL torch_tensor_view::torch_tensor_view(const torch::Tensor& tensor) : cpu_(dense_cpu(tensor)) {
    const dtype type = *dtype_from_torch(cpu_.scalar_type()); // dense_cpu checked it
    tensor_value::shape_type shape;
    shape.reserve(static_cast<std::size_t>(cpu_.dim()));
    for (const std::int64_t size : cpu_.sizes()) {
        shape.push_back(static_cast<std::size_t>(size));
    }
    const void* data = cpu_.data_ptr();
    value_ = visit_dtype(type, [&](auto tag) -> tensor_value {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, std::string>) {
            throw error("torch_tensor_view: torch has no string tensors");
        } else {
            return tensor_value::borrow<T>(static_cast<const T*>(data), std::move(shape));
        }
    });
}

TDBG_DECL torch::Tensor torch_tensor_view::dense_cpu(const torch::Tensor& tensor) {
    if (!tensor.defined()) {
        throw error("torch_tensor_view: an undefined tensor (a gradient before backward?)");
    }
    if (!dtype_from_torch(tensor.scalar_type())) {
        throw error(fmt::format("torch_tensor_view: tdbg has no dtype for torch's {} (convert it first, e.g. "
                                "tensor.dequantize() or tensor.to(torch::kFloat))",
                                c10::toString(tensor.scalar_type())));
    }
    // The conversions below are no part of training: keep autograd out of them.
    const torch::NoGradGuard no_grad;
    torch::Tensor out = tensor;
    if (out.layout() != c10::kStrided) {
        out = out.to_dense(); // sparse and mkldnn tensors
    }
    if (!out.device().is_cpu()) {
        out = out.cpu();
    }
    // Lazy conjugate and negative views: materialise what the tensor means, not its storage.
    out = out.resolve_conj().resolve_neg();
    return out.contiguous();
}

TDBG_DECL torch::Tensor to_torch(const tensor_value& value) {
    const auto type = torch_scalar_type(value.type());
    if (!type) {
        throw error(fmt::format("to_torch: torch has no dtype for tdbg's {}", dtype_name(value.type())));
    }
    std::vector<std::int64_t> sizes;
    sizes.reserve(value.dimension());
    for (const std::size_t size : value.shape()) {
        sizes.push_back(static_cast<std::int64_t>(size));
    }
    torch::Tensor out = torch::empty(sizes, torch::TensorOptions().dtype(*type));
    if (value.nbytes() != 0) {
        std::memcpy(out.data_ptr(), value.bytes().data(), value.nbytes());
    }
    return out;
}

TDBG_DECL torch_hook::torch_hook(hook_type& target, torch_hook_options options)
    : hook_(&target), options_(options),
      device_(std::make_unique<detail::torch_device_batches>(target, options_.pinned_pool_bytes,
                                                             options_.reducer == device_reducer::automatic)) {}

TDBG_DECL torch_hook::~torch_hook() = default;
TDBG_DECL torch_hook::torch_hook(torch_hook&& other) noexcept = default;
TDBG_DECL torch_hook& torch_hook::operator=(torch_hook&& other) noexcept = default;

TDBG_DECL void torch_hook::register_module(const torch::nn::Module& module, std::string class_name) {
    if (class_name.empty()) {
        class_name = torch_class_name(module);
    }
    std::vector<std::pair<const torch::nn::Module*, std::string>> modules{{&module, class_name}};
    for (const auto& item : module.named_modules(/*name_prefix=*/std::string(), /*include_self=*/false)) {
        modules.emplace_back(item.value().get(), item.key());
    }
    for (const auto& [pointer, name] : modules) {
        if (module_names_.count(pointer) != 0) {
            throw config_error(fmt::format("torch_hook: module '{}' ({}) is registered already; register each model once",
                                           name, pointer->name()));
        }
    }
    std::unordered_set<const void*> seen = seen_parameters_;
    std::vector<parameter> fresh;
    for (const auto& item : module.named_parameters(/*recurse=*/true)) {
        if (!seen.insert(item.value().unsafeGetTensorImpl()).second) {
            continue;
        }
        std::string name = fmt::format("{}_{}", class_name, item.key());
        const auto clash = [&](const parameter& p) { return p.name == name; };
        if (std::any_of(parameters_.begin(), parameters_.end(), clash) ||
            std::any_of(fresh.begin(), fresh.end(), clash)) {
            throw config_error(fmt::format("torch_hook: a parameter named '{}' is registered already; give the "
                                           "second model another class name",
                                           name));
        }
        fresh.push_back(parameter{std::move(name), item.value()});
    }
    // Nothing has thrown: commit. A module reached twice keeps its first path, as named_modules.
    for (auto& [pointer, name] : modules) {
        module_names_.emplace(pointer, std::move(name));
    }
    seen_parameters_ = std::move(seen);
    std::move(fresh.begin(), fresh.end(), std::back_inserter(parameters_));
}

TDBG_DECL const std::string& torch_hook::module_name(const torch::nn::Module& module) const {
    const auto it = module_names_.find(&module);
    if (it == module_names_.end()) {
        throw config_error(fmt::format(
            "torch_hook: module {} is not registered (register_module() the model that holds it)", module.name()));
    }
    return it->second;
}

TDBG_DECL std::vector<std::string> torch_hook::parameter_names() const {
    std::vector<std::string> names;
    names.reserve(parameters_.size());
    for (const parameter& p : parameters_) {
        names.push_back(p.name);
    }
    return names;
}

TDBG_DECL void torch_hook::begin_step() {
    hook_->begin_step();
    save_parameters();
}

TDBG_DECL void torch_hook::save_parameters() {
    tensor_batch batch;
    batch.reserve(parameters_.size());
    for (const parameter& p : parameters_) {
        batch.emplace_back(p.name, &p.tensor);
    }
    save_batch(batch);
}

TDBG_DECL void torch_hook::after_backward() {
    constexpr std::string_view gradient_prefix = "gradient/";
    std::vector<std::string> names;
    std::vector<torch::Tensor> gradients;
    for (const parameter& p : parameters_) {
        const torch::Tensor& gradient = p.tensor.grad();
        if (gradient.defined()) {
            names.push_back(fmt::format("{}{}", gradient_prefix, p.name));
            gradients.push_back(gradient);
        }
    }
    tensor_batch batch;
    batch.reserve(names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
        batch.emplace_back(names[i], &gradients[i]);
    }
    save_batch(batch);
}

TDBG_DECL std::string torch_hook::record_loss(const torch::nn::Module& loss_module, const torch::Tensor& loss) {
    return record_loss(torch_class_name(loss_module), loss);
}

TDBG_DECL std::string torch_hook::record_loss(std::string_view name, const torch::Tensor& loss) {
    return save_indexed(name, output_suffix, loss, {collection_names::losses});
}

TDBG_DECL std::string torch_hook::record_tensor_value(std::string_view name, const torch::Tensor& value,
                                                      std::initializer_list<std::string_view> collections) {
    return save_indexed(name, output_suffix, value, collections);
}

TDBG_DECL std::string torch_hook::save_output(const torch::nn::Module& module, const torch::Tensor& output,
                                              std::initializer_list<std::string_view> collections) {
    return save_indexed(module_name(module), output_suffix, output, collections);
}

TDBG_DECL std::vector<std::string> torch_hook::save_outputs(const torch::nn::Module& module,
                                                            const std::vector<torch::Tensor>& outputs,
                                                            std::initializer_list<std::string_view> collections) {
    return save_each(module_name(module), output_suffix, outputs, collections);
}

TDBG_DECL std::string torch_hook::save_input(const torch::nn::Module& module, const torch::Tensor& input,
                                             std::initializer_list<std::string_view> collections) {
    return save_indexed(module_name(module), input_suffix, input, collections);
}

TDBG_DECL std::vector<std::string> torch_hook::save_inputs(std::string_view name,
                                                           const std::vector<torch::Tensor>& inputs,
                                                           std::initializer_list<std::string_view> collections) {
    return save_each(name, input_suffix, inputs, collections);
}

TDBG_DECL void torch_hook::save_tensor(std::string_view name, const torch::Tensor& tensor,
                                       std::initializer_list<std::string_view> collections) {
    if (on_device_path(tensor)) {
        std::vector<detail::torch_device_batches::device_item> batch;
        if (auto item = device_->plan(name, tensor, collections)) {
            batch.push_back(std::move(*item));
        }
        device_->launch(batch);
    } else {
        save_on_cpu(name, tensor, collections);
    }
}

TDBG_DECL std::uint64_t torch_hook::dropped_tensors() const noexcept { return device_->dropped(); }

TDBG_DECL std::size_t torch_hook::pinned_bytes_in_use() const { return device_->pinned_bytes_in_use(); }

TDBG_DECL void torch_hook::save_batch(const tensor_batch& tensors) {
    std::vector<detail::torch_device_batches::device_item> batch;
    for (const auto& [name, tensor] : tensors) {
        if (on_device_path(*tensor)) {
            if (auto item = device_->plan(name, *tensor, {})) {
                batch.push_back(std::move(*item));
            }
        } else {
            save_on_cpu(name, *tensor, {});
        }
    }
    device_->launch(batch);
}

TDBG_DECL void torch_hook::save_on_cpu(std::string_view name, const torch::Tensor& tensor,
                                       std::initializer_list<std::string_view> collections) {
    if (!tensor.defined()) {
        throw error(fmt::format("torch_hook: cannot save '{}': the tensor is undefined", name));
    }
    if (collections.size() == 0 && !hook_->should_save_tensor(name)) {
        // Not saved at this step: no conversion. The hook still sees the call, with an empty
        // value it will not write, and checks it (an open step, a valid name).
        hook_->save_tensor(name, tensor_value());
        return;
    }
    const torch_tensor_view view(tensor);
    hook_->save_tensor(name, view.value(), collections, reduction_convention::pytorch);
}

TDBG_DECL std::string torch_hook::save_indexed(std::string_view name, std::string_view suffix,
                                               const torch::Tensor& tensor,
                                               std::initializer_list<std::string_view> collections) {
    const std::string prefix = fmt::format("{}{}", name, suffix);
    std::string tensor_name = fmt::format("{}{}", prefix, hook_->next_index_in_step(prefix));
    save_tensor(tensor_name, tensor, collections);
    return tensor_name;
}

TDBG_DECL std::vector<std::string> torch_hook::save_each(std::string_view name, std::string_view suffix,
                                                         const std::vector<torch::Tensor>& tensors,
                                                         std::initializer_list<std::string_view> collections) {
    std::vector<std::string> names;
    names.reserve(tensors.size());
    for (const torch::Tensor& tensor : tensors) {
        names.push_back(save_indexed(name, suffix, tensor, collections));
    }
    return names;
}

} // namespace tdbg
