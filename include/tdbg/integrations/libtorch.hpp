#pragma once
/// \file
/// libtorch integration: `torch_hook` saves a `torch::nn::Module`'s parameters, its
/// gradients after backward, losses and chosen module inputs and outputs through a tdbg hook,
/// under the names smdebug's PyTorch hook gives them, so that a C++ run reads like a PyTorch
/// job's to every smdebug tool. Needs libtorch: link the CMake target `tdbg::libtorch`.
///
/// The sequence. smdebug drives its hook from module callbacks; libtorch's C++ modules have no
/// forward hooks, so the callbacks are calls:
///
///     tdbg::hook hook(options);
///     tdbg::torch_hook torch_hook(hook);          // refers to `hook`, which must outlive it
///     torch_hook.register_module(*net);           // class "Net": Net_fc1.weight, Net_fc1.bias, ...
///     hook.set_mode(tdbg::mode::train);
///     for (...) {
///         torch_hook.begin_step();                // hook.begin_step(), then the parameters as this
///                                                 // step's forward uses them (smdebug's forward_pre_hook)
///         if (hook.should_stop()) break;
///         auto h = net->fc1(x);
///         torch_hook.save_output(*net->fc1, h);   // "fc1_output_0", when a collection selects it
///         auto loss = criterion(net->forward(x), y);
///         torch_hook.record_loss(*criterion, loss);   // "CrossEntropyLoss_output_0", collection losses
///         optimizer.zero_grad();
///         loss.backward();
///         torch_hook.after_backward();            // "gradient/Net_fc1.weight", ... from .grad()
///         optimizer.step();
///     }
///     hook.close();
///
/// Names, as smdebug's PyTorch hook makes them (smdebug/pytorch/hook.py, core/hook.py):
/// - A parameter is `<Class>_<name>`: the registered module's class name, '_', and the name
///   named_parameters() gives it, dots kept: `Net_fc1.weight`. The weights and biases
///   collections select them by their default regexes (`weight`, `bias` in the name); a
///   parameter whose name holds neither is saved only through another collection, as in smdebug.
/// - Its gradient is `gradient/<Class>_<name>` (collection gradients; never saved in EVAL or
///   PREDICT mode).
/// - A module's outputs are `<module name>_output_<i>` and its inputs `<module name>_input_<i>`,
///   where the module name is the path named_modules() gives (`fc1`, `layers.0.conv`) and, for
///   the registered module itself, its class name (`Net_output_0`). `i` counts the tensors
///   offered under that prefix in the current step, saved or not: the elements of a tuple
///   output, a module called twice in a step (smdebug's written_tensor_name_for_step, which
///   restarts at every step). The hook keeps the count (hook::next_index_in_step), so every
///   torch_hook over one hook counts in one sequence, as one torch_hook over all their models
///   would: in a GAN with a torch_hook per model, the discriminator's two losses are
///   `BCELoss_output_0` and `_1` and the generator's, recorded after them, `BCELoss_output_2`.
/// - A loss is saved as the output of a module named after the loss class:
///   `CrossEntropyLoss_output_0`, which the losses collection's regex `[Ll]oss_(?!input).*output`
///   selects (smdebug's register_loss saves a loss module's outputs under its class name; its
///   `record_tensor_value(name, t)` for functional losses saves `<name>_output_0`).
///   record_loss also puts the name in the losses collection explicitly, so that a loss whose
///   name the regex misses (`mse_output_0`) is still a loss; losses are always saved.
/// - A class name is `Module::name()` (the demangled C++ type, or the name given to the Module
///   constructor) without namespaces, template arguments and the `Impl` suffix of libtorch's
///   TORCH_MODULE convention: `torch::nn::CrossEntropyLossImpl` becomes `CrossEntropyLoss`, as
///   Python's class is called. register_module takes an explicit class name too.
///
/// Where it differs from smdebug's PyTorch hook:
/// - Gradients: smdebug saves each gradient from a tensor hook as backward computes it; after_backward()
///   saves the parameters' .grad() as it stands. The two agree when each step runs one backward
///   after zero_grad(); with gradient accumulation smdebug writes the gradient of every backward
///   call, after_backward() the accumulated sum, once per call.
/// - Inputs and outputs are saved where the training code says so (save_output, save_input),
///   not from every submodule's forward hook; a loss module's inputs likewise (save_inputs).
///
/// Values on the CPU: a dense, contiguous CPU tensor is viewed without a copy (its memory is
/// borrowed for the call and copied only when the tensor is saved raw at this step); a
/// non-contiguous one is made contiguous, only at a step that saves it (unless the call names
/// collections to add it to, as record_loss does). Its reductions are computed on the training
/// thread in one fused pass.
///
/// Values on a device (CUDA): never copied to the host whole for reductions, and the training
/// thread never waits for the device (detail/libtorch_batch.hpp). The device tensors of one call
/// (all parameters at begin_step, all gradients at after_backward) go as one batch per device:
/// where tdbg::cuda is built and torch has CUDA (TDBG_TORCH_HAS_CUDA, set by CMake), through
/// tdbg::cuda::device_saver, the save path any CUDA program can use (cuda/save.hpp), on torch's
/// current stream; else by torch operations on their device. Either way the results, raw values
/// (into a bounded pool of pinned host memory: torch_hook_options::pinned_pool_bytes) and
/// histogram counts (binned on the device) are copied with non-blocking copies behind an event
/// that the hook's writer waits for (hook/deferred.hpp). force_device_path sends CPU tensors
/// through the torch operations too.
///
/// Records: as smdebug's PyTorch hook writes them (reduce/convention.hpp): a reduction is a 0-d
/// tensor of torch's result dtype, std and variance are unbiased, and a reduction torch refuses
/// for a dtype (the mean of integers, abs of bool) is not written.
///
/// torch's dtypes map to tdbg's (float, double, half, bfloat16, the integer types, bool,
/// complex); quantized and complex-half tensors are refused with an error that says to convert them.
///
/// Compiled once or header-only, as the rest of tdbg (tdbg/config.hpp): header-only, this header
/// also defines torch_hook (impl/libtorch.ipp, inline); with TDBG_SEPARATE_COMPILATION it only
/// declares it, and the integration's part of the engine, tdbg/integrations/src/libtorch.hpp,
/// defines it once (CMake: link tdbg::libtorch_compiled, or the installed tdbg::libtorch_engine,
/// instead of tdbg::compiled or tdbg::engine).
///
/// libtorch's logging (glog) defines a `CHECK(condition)` macro, which replaces Catch2's `CHECK`
/// when libtorch comes second: in a Catch2 test, include libtorch first, `#undef CHECK`, then Catch2.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

#include "tdbg/config.hpp"
#include "tdbg/core/tensor_value.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/integrations/torch_dtype.hpp"

namespace tdbg {

namespace detail {

/// The Python class name for a demangled C++ type name: namespaces, template arguments and
/// a trailing `Impl` (libtorch's TORCH_MODULE convention) removed.
[[nodiscard]] TDBG_DECL std::string python_class_name(std::string_view type_name);

class torch_device_batches; // detail/libtorch_batch.hpp: torch_hook's device path

} // namespace detail

/// The Python class name of a libtorch module: "Net", "Linear", "CrossEntropyLoss".
[[nodiscard]] TDBG_DECL std::string torch_class_name(const torch::nn::Module& module);

/// A torch tensor seen as a tdbg tensor_value: borrowed, without a copy, from a dense contiguous
/// CPU tensor, which the view keeps alive; any other tensor is converted to one first.
class torch_tensor_view {
public:
    /// Views `tensor`; throws tdbg::error for an undefined tensor or a dtype tdbg does not have.
    TDBG_DECL explicit torch_tensor_view(const torch::Tensor& tensor);

    /// The value; it borrows the memory of tensor(), so it is valid while this view lives.
    [[nodiscard]] const tensor_value& value() const noexcept { return value_; }
    /// The dense contiguous CPU tensor viewed: the one given, or its converted copy.
    [[nodiscard]] const torch::Tensor& tensor() const noexcept { return cpu_; }

private:
    TDBG_DECL static torch::Tensor dense_cpu(const torch::Tensor& tensor);

    torch::Tensor cpu_;
    tensor_value value_;
};

/// A copy of `value` as a CPU torch tensor; throws tdbg::error for a dtype torch does not have
/// (uint16, uint32, uint64, string).
[[nodiscard]] TDBG_DECL torch::Tensor to_torch(const tensor_value& value);

/// How torch_hook reduces tensors that are not on the CPU.
enum class device_reducer {
    /// tdbg::cuda::device_saver (the fused kernel, device histograms) where tdbg::cuda is built
    /// and the tensor is on a CUDA device, else batched torch operations on the tensor's device.
    automatic,
    /// Batched torch operations on the tensor's device, even where tdbg::cuda is built.
    torch_ops,
};

/// Settings of a torch_hook.
struct torch_hook_options {
    /// Pinned host memory that copies of device tensors in flight (raw values, histogram counts)
    /// may hold at once, in bytes. When it is full, the hook's full-queue policy applies: the
    /// training thread waits for the writer to free a buffer (block), or the tensor is dropped (drop).
    std::size_t pinned_pool_bytes = std::size_t{256} << 20U;
    /// How reductions of device tensors are computed.
    device_reducer reducer = device_reducer::automatic;
    /// Sends CPU tensors through the device path too (torch operations on the CPU, copies into
    /// the pool, values handed to the writer deferred): lets a machine without a GPU test it.
    bool force_device_path = false;
};

/// Saves a libtorch model's parameters, gradients, losses and chosen inputs and outputs through
/// a tdbg hook, under smdebug's PyTorch names (see the file comment for the sequence of calls).
/// It refers to the hook, which must outlive it; like the hook, it is driven by one thread.
class torch_hook {
public:
    /// The hook type it drives.
    using hook_type = ::tdbg::hook;

    /// Saves through `target`.
    TDBG_DECL explicit torch_hook(hook_type& target, torch_hook_options options = {});
    TDBG_DECL ~torch_hook();
    torch_hook(const torch_hook&) = delete;
    torch_hook& operator=(const torch_hook&) = delete;
    /// Movable: the moved-to torch_hook saves through the same hook, with the same registrations.
    TDBG_DECL torch_hook(torch_hook&& other) noexcept;
    TDBG_DECL torch_hook& operator=(torch_hook&& other) noexcept;

    /// The settings it was built with.
    [[nodiscard]] const torch_hook_options& options() const noexcept { return options_; }

    /// The hook it saves through (`torch_hook.base().set_mode(...)`, `.base().close()`).
    [[nodiscard]] hook_type& base() const noexcept { return *hook_; }

    // ---- registration ------------------------------------------------------

    /// Registers `module`, named `class_name` (default: torch_class_name(module)): its parameters
    /// are saved by begin_step() and save_parameters(), their gradients by after_backward(), and its
    /// submodules get their named_modules() paths for save_output() and save_input(). A parameter
    /// shared by two submodules is saved once, under its first name (as Python's named_parameters).
    /// Throws config_error when the module, one of its submodules or a parameter name is registered
    /// already; nothing is registered then.
    TDBG_DECL void register_module(const torch::nn::Module& module, std::string class_name = {});

    /// The name of registered `module` in tensor names: its class name for a registered model,
    /// its named_modules() path for a submodule. Throws config_error for a module not registered.
    [[nodiscard]] TDBG_DECL const std::string& module_name(const torch::nn::Module& module) const;

    /// The tensor names of the registered parameters, in registration order: "Net_fc1.weight", ...
    [[nodiscard]] TDBG_DECL std::vector<std::string> parameter_names() const;

    // ---- steps -----------------------------------------------------------------

    /// Starts the next step (hook::begin_step) and saves the registered parameters as they are
    /// now, before the forward pass, as smdebug's forward_pre_hook does.
    TDBG_DECL void begin_step();

    /// Saves every registered parameter as `<Class>_<name>` where a collection selects it at this step.
    TDBG_DECL void save_parameters();

    /// Saves the gradient of every registered parameter that has one as `gradient/<Class>_<name>`;
    /// call it after backward() and before the optimizer's step. A model with several backward
    /// passes in a step (a GAN's discriminator): after its last one, before its optimizer's step.
    TDBG_DECL void after_backward();

    // ---- tensors ---------------------------------------------------------------

    /// Saves the loss computed by `loss_module` as `<Class>_output_<i>` (CrossEntropyLoss_output_0),
    /// in the losses collection. Returns the tensor name.
    TDBG_DECL std::string record_loss(const torch::nn::Module& loss_module, const torch::Tensor& loss);
    /// Saves a loss computed by a function as `<name>_output_<i>`, in the losses collection;
    /// `name` is usually the loss's class name in Python ("CrossEntropyLoss"). Returns the tensor name.
    TDBG_DECL std::string record_loss(std::string_view name, const torch::Tensor& loss);

    /// smdebug's record_tensor_value: saves `value` as `<name>_output_<i>`. Returns the tensor name.
    TDBG_DECL std::string record_tensor_value(std::string_view name, const torch::Tensor& value,
                                              std::initializer_list<std::string_view> collections = {});

    /// Saves an output of registered `module` as `<module name>_output_<i>`. Returns the tensor name.
    TDBG_DECL std::string save_output(const torch::nn::Module& module, const torch::Tensor& output,
                                      std::initializer_list<std::string_view> collections = {});
    /// Saves the elements of a tuple output as `<module name>_output_<i>`, `_output_<i+1>`, ...
    TDBG_DECL std::vector<std::string> save_outputs(const torch::nn::Module& module,
                                                    const std::vector<torch::Tensor>& outputs,
                                                    std::initializer_list<std::string_view> collections = {});
    /// Saves an input of registered `module` as `<module name>_input_<i>`. Returns the tensor name.
    TDBG_DECL std::string save_input(const torch::nn::Module& module, const torch::Tensor& input,
                                     std::initializer_list<std::string_view> collections = {});
    /// Saves several inputs as `<name>_input_<i>`, ...; `name` as a module name, e.g. a loss
    /// class's ("CrossEntropyLoss" for its logits and labels, as smdebug's register_loss does).
    TDBG_DECL std::vector<std::string> save_inputs(std::string_view name, const std::vector<torch::Tensor>& inputs,
                                                   std::initializer_list<std::string_view> collections = {});

    /// Saves `tensor` under `name` as it stands, when one of its collections (those whose regexes
    /// match, plus `collections`) saves at this step; see hook::save_tensor.
    TDBG_DECL void save_tensor(std::string_view name, const torch::Tensor& tensor,
                               std::initializer_list<std::string_view> collections = {});

    /// Raw values of device tensors not saved because the pool of host memory was full
    /// (torch_hook_options::pinned_pool_bytes, with full_queue_policy::drop).
    [[nodiscard]] TDBG_DECL std::uint64_t dropped_tensors() const noexcept;
    /// Bytes of host memory that copies of device tensors hold now (written or not yet).
    [[nodiscard]] TDBG_DECL std::size_t pinned_bytes_in_use() const;

private:
    struct parameter {
        std::string name;
        torch::Tensor tensor; // shares the parameter: its data and .grad() as they are when read
    };
    using tensor_batch = std::vector<std::pair<std::string_view, const torch::Tensor*>>;

    static constexpr std::string_view output_suffix = "_output_";
    static constexpr std::string_view input_suffix = "_input_";

    // False for an undefined tensor, which save_on_cpu refuses by name.
    [[nodiscard]] bool on_device_path(const torch::Tensor& tensor) const {
        return tensor.defined() && (!tensor.device().is_cpu() || options_.force_device_path);
    }
    // Saves tensors, the device ones as one batch per device: what begin_step and after_backward save.
    TDBG_DECL void save_batch(const tensor_batch& tensors);
    // A CPU tensor: viewed without a copy, reduced on this thread, copied only when saved raw.
    TDBG_DECL void save_on_cpu(std::string_view name, const torch::Tensor& tensor,
                               std::initializer_list<std::string_view> collections);
    // The index is counted by the hook, not by this torch_hook: every torch_hook over one hook
    // numbers "<name>_output_" in one sequence per step, so that a GAN's discriminator and generator,
    // each with its torch_hook, record their losses as _output_0, _1, _2 instead of both taking _0.
    TDBG_DECL std::string save_indexed(std::string_view name, std::string_view suffix, const torch::Tensor& tensor,
                                       std::initializer_list<std::string_view> collections);
    TDBG_DECL std::vector<std::string> save_each(std::string_view name, std::string_view suffix,
                                                 const std::vector<torch::Tensor>& tensors,
                                                 std::initializer_list<std::string_view> collections);

    hook_type* hook_; // a pointer, not a reference: keeps torch_hook movable
    torch_hook_options options_;
    std::unique_ptr<detail::torch_device_batches> device_; // held by pointer: its definition is the .ipp's
    std::vector<parameter> parameters_;
    std::unordered_set<const void*> seen_parameters_; // TensorImpl pointers, to save a shared parameter once
    std::unordered_map<const torch::nn::Module*, std::string> module_names_;
};

} // namespace tdbg

#if TDBG_HEADER_ONLY
#include "tdbg/integrations/impl/libtorch.ipp"
#elif !defined(TDBG_DETAIL_LIBTORCH_SOURCE) && defined(__ELF__) && (defined(__GNUC__) || defined(__clang__))
// The integration's part guard: a file compiled against the engine that uses torch_hook needs
// the integration's part too. A program that links tdbg::compiled (or tdbg::engine) without it
// fails to link with an error that says what to link: "undefined reference to
// `tdbg_libtorch_part_missing_link_tdbg_libtorch_compiled_or_tdbg_libtorch_engine'".
extern "C" const char tdbg_libtorch_part_missing_link_tdbg_libtorch_compiled_or_tdbg_libtorch_engine;
namespace tdbg::detail {
[[gnu::used]] static const char* const libtorch_part_anchor =
    &tdbg_libtorch_part_missing_link_tdbg_libtorch_compiled_or_tdbg_libtorch_engine;
} // namespace tdbg::detail
#endif
