// The libtorch integration: a small network trained with libtorch and torch_hook, read back
// with tdbg's trial: smdebug's PyTorch names, collections, steps, and values equal to the torch
// tensors' at the saved steps. Also the same run shape as the Python smdebug fixture
// pytorch_mlp, name for name and step for step.

// libtorch first: its logging (glog) defines CHECK(condition), which Catch2's CHECK replaces
// below. Nothing after this point uses glog's.
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/loss.h>
#include <torch/optim/sgd.h>

#include "tdbg/integrations/libtorch.hpp"
#undef CHECK

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support.hpp"
#include "tdbg/hook/hook.hpp"
#include "tdbg/trial/trial.hpp"

using tdbg::test::temp_dir;

namespace {

// The model of smdebug's PyTorch examples and of the pytorch_mlp fixture, where Python's
// class is called MLP: registered under that name (the C++ class would give "mlp").
struct mlp : torch::nn::Module {
    mlp(std::int64_t inputs, std::int64_t hidden, std::int64_t classes)
        : fc1(register_module("fc1", torch::nn::Linear(inputs, hidden))),
          act(register_module("act", torch::nn::ReLU())),
          fc2(register_module("fc2", torch::nn::Linear(hidden, classes))) {}

    torch::nn::Linear fc1;
    torch::nn::ReLU act;
    torch::nn::Linear fc2;
};

tdbg::tensor_value::shape_type shape_of(const torch::Tensor& t) {
    tdbg::tensor_value::shape_type shape;
    for (const std::int64_t size : t.sizes()) {
        shape.push_back(static_cast<std::size_t>(size));
    }
    return shape;
}

// Element by element: the saved value is bit for bit the float32 tensor torch had.
void check_same_values(const std::string& what, const tdbg::tensor_value& saved, const torch::Tensor& expected) {
    INFO(what);
    REQUIRE(saved.type() == tdbg::dtype::float32);
    REQUIRE(saved.shape() == shape_of(expected));
    const torch::Tensor want = expected.contiguous();
    const float* got = saved.data_as<float>();
    const float* ref = want.data_ptr<float>();
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < saved.size(); ++i) {
        mismatches += got[i] == ref[i] ? 0 : 1;
    }
    CHECK(mismatches == 0);
    CHECK(torch::equal(tdbg::to_torch(saved), want));
}

struct data_set {
    torch::Tensor x;
    torch::Tensor y;
};

// Points labelled by a random linear teacher: an easy problem whose loss falls quickly.
data_set make_data(std::int64_t points, std::int64_t inputs, std::int64_t classes) {
    data_set d;
    d.x = torch::randn({points, inputs});
    d.y = d.x.mm(torch::randn({inputs, classes})).argmax(1);
    return d;
}

tdbg::hook_options options_every(const temp_dir& dir, std::uint64_t interval) {
    tdbg::hook_options o;
    o.out_dir = (dir.path() / "run").string();
    o.save_config = tdbg::save_config(tdbg::save_config_mode{interval, {}, 0, std::nullopt});
    o.include_collections = {"weights", "biases", "gradients", "losses"};
    return o;
}

} // namespace

TEST_CASE("torch_hook saves parameters, gradients and losses with smdebug's names and torch's values") {
    torch::manual_seed(7);
    temp_dir dir("libtorch_train");
    tdbg::hook_options options = options_every(dir, 3);
    tdbg::collection fc1_outputs("fc1_outputs");
    fc1_outputs.include("^fc1_output_");
    options.collections = {fc1_outputs};

    auto net = std::make_shared<mlp>(6, 12, 3);
    torch::nn::CrossEntropyLoss criterion;
    torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.5));
    const data_set data = make_data(96, 6, 3);

    struct saved_step {
        std::map<std::string, torch::Tensor> parameters; // as the step's forward used them
        std::map<std::string, torch::Tensor> gradients;
        torch::Tensor fc1_output;
    };
    std::map<std::int64_t, saved_step> expected;
    std::vector<float> losses;
    constexpr int steps = 12;
    {
        tdbg::hook hook(options);
        tdbg::torch_hook torch_hook(hook);
        CHECK(tdbg::torch_class_name(*net) == "mlp"); // "(anonymous namespace)::mlp"
        torch_hook.register_module(*net, "MLP");
        CHECK(torch_hook.parameter_names() ==
              std::vector<std::string>{"MLP_fc1.weight", "MLP_fc1.bias", "MLP_fc2.weight", "MLP_fc2.bias"});
        CHECK(torch_hook.module_name(*net) == "MLP");
        CHECK(torch_hook.module_name(*net->fc1) == "fc1");

        hook.set_mode(tdbg::mode::train);
        for (int step = 0; step < steps; ++step) {
            torch_hook.begin_step();
            const bool saving = step % 3 == 0;
            CHECK(hook.is_saving_step() == saving);
            saved_step copies;
            for (const auto& p : net->named_parameters()) {
                copies.parameters["MLP_" + p.key()] = p.value().detach().clone();
            }
            const torch::Tensor h = net->fc1(data.x);
            CHECK(torch_hook.save_output(*net->fc1, h) == "fc1_output_0");
            copies.fc1_output = h.detach().clone();
            const torch::Tensor loss = criterion(net->fc2(net->act(h)), data.y);
            CHECK(torch_hook.record_loss(*criterion, loss) == "CrossEntropyLoss_output_0");
            losses.push_back(loss.item<float>());
            optimizer.zero_grad();
            loss.backward();
            torch_hook.after_backward();
            for (const auto& p : net->named_parameters()) {
                copies.gradients["gradient/MLP_" + p.key()] = p.value().grad().clone();
            }
            optimizer.step();
            if (saving) {
                expected[step] = std::move(copies);
            }
        }
        // EVAL: parameters and the loss are saved, gradients never (smdebug's rule), even when asked.
        hook.set_mode(tdbg::mode::eval);
        torch_hook.begin_step();
        {
            const torch::NoGradGuard no_grad;
            const torch::Tensor loss = criterion(net->fc2(net->act(net->fc1(data.x))), data.y);
            torch_hook.record_loss(*criterion, loss);
        }
        torch_hook.after_backward();
        hook.close();
    }

    const auto trial = tdbg::create_trial((dir.path() / "run").string());
    const std::vector<std::string> parameters{"MLP_fc1.bias", "MLP_fc1.weight", "MLP_fc2.bias", "MLP_fc2.weight"};
    const std::vector<std::string> gradients{"gradient/MLP_fc1.bias", "gradient/MLP_fc1.weight",
                                             "gradient/MLP_fc2.bias", "gradient/MLP_fc2.weight"};
    std::vector<std::string> all{"CrossEntropyLoss_output_0"};
    all.insert(all.end(), parameters.begin(), parameters.end());
    all.emplace_back("fc1_output_0");
    all.insert(all.end(), gradients.begin(), gradients.end());
    CHECK(trial.tensor_names() == all);

    // Collections: the names the hook's default regexes and our own collection picked.
    const auto in = [&](const std::string& collection) {
        return trial.tensor_names(std::nullopt, tdbg::mode::global, std::nullopt, collection);
    };
    CHECK(in("weights") == std::vector<std::string>{"MLP_fc1.weight", "MLP_fc2.weight"});
    CHECK(in("biases") == std::vector<std::string>{"MLP_fc1.bias", "MLP_fc2.bias"});
    CHECK(in("gradients") == gradients);
    CHECK(in("losses") == std::vector<std::string>{"CrossEntropyLoss_output_0"});
    CHECK(in("fc1_outputs") == std::vector<std::string>{"fc1_output_0"});
    CHECK(trial.collection("losses").tensor_names == std::vector<std::string>{"CrossEntropyLoss_output_0"});

    // Steps: every third TRAIN step, then the one EVAL step (global step 12), without gradients.
    CHECK(trial.steps(tdbg::mode::train) == std::vector<std::int64_t>{0, 3, 6, 9});
    CHECK(trial.steps() == std::vector<std::int64_t>{0, 3, 6, 9, 12});
    CHECK(trial.tensor_names(12) == std::vector<std::string>{"CrossEntropyLoss_output_0", "MLP_fc1.bias",
                                                             "MLP_fc1.weight", "MLP_fc2.bias", "MLP_fc2.weight"});
    for (const auto& name : gradients) {
        CHECK(trial.tensor(name).steps() == std::vector<std::int64_t>{0, 3, 6, 9});
    }

    // Values: what torch had at those steps, element by element.
    for (const auto& [step, copies] : expected) {
        for (const auto& [name, value] : copies.parameters) {
            check_same_values(name + " at step " + std::to_string(step), trial.tensor(name).value(step), value);
        }
        for (const auto& [name, value] : copies.gradients) {
            check_same_values(name + " at step " + std::to_string(step), trial.tensor(name).value(step), value);
        }
        check_same_values("fc1_output_0 at step " + std::to_string(step), trial.tensor("fc1_output_0").value(step),
                          copies.fc1_output);
        const tdbg::tensor_value loss = trial.tensor("CrossEntropyLoss_output_0").value(step);
        CHECK(loss.dimension() == 0); // a 0-d float32, as smdebug saves a PyTorch loss
        CHECK(loss.data_as<float>()[0] == losses[static_cast<std::size_t>(step)]);
    }
    CHECK(trial.tensor("MLP_fc1.weight").shape(0) == tdbg::tensor_value::shape_type{12, 6});

    // The loss decreases: the saved ones, step over step, and from the first step to the last.
    const auto saved_losses = trial.tensor("CrossEntropyLoss_output_0").values(tdbg::mode::train);
    REQUIRE(saved_losses.size() == 4);
    float previous = saved_losses.begin()->second.data_as<float>()[0];
    for (auto it = std::next(saved_losses.begin()); it != saved_losses.end(); ++it) {
        const float current = it->second.data_as<float>()[0];
        CHECK(current < previous);
        previous = current;
    }
    CHECK(losses.back() < 0.75F * losses.front());
}

TEST_CASE("torch_tensor_view borrows dense CPU tensors and converts the others") {
    const torch::Tensor dense = torch::arange(12, torch::kFloat).reshape({3, 4});
    const tdbg::torch_tensor_view view(dense);
    CHECK(view.value().type() == tdbg::dtype::float32);
    CHECK(view.value().shape() == tdbg::tensor_value::shape_type{3, 4});
    CHECK(!view.value().owns_data());
    // No copy: the value's bytes are the tensor's memory.
    CHECK(static_cast<const void*>(view.value().bytes().data()) == dense.data_ptr());

    const torch::Tensor transposed = dense.t();
    REQUIRE(!transposed.is_contiguous());
    const tdbg::torch_tensor_view made_contiguous(transposed);
    CHECK(made_contiguous.value().shape() == tdbg::tensor_value::shape_type{4, 3});
    CHECK(made_contiguous.value().data_as<float>()[1] == 4.0F); // row 0 of the transpose: 0, 4, 8
    CHECK(made_contiguous.value().data_as<float>()[2] == 8.0F);

    const torch::Tensor scalar = torch::tensor(2.5, torch::kDouble);
    CHECK(tdbg::torch_tensor_view(scalar).value().shape().empty());
    CHECK(tdbg::torch_tensor_view(scalar).value().data_as<double>()[0] == 2.5);

    // Every dtype both sides have survives the trip to tdbg and back.
    const std::vector<std::pair<c10::ScalarType, tdbg::dtype>> types{
        {torch::kFloat, tdbg::dtype::float32},     {torch::kDouble, tdbg::dtype::float64},
        {torch::kHalf, tdbg::dtype::float16},      {torch::kBFloat16, tdbg::dtype::bfloat16},
        {torch::kInt8, tdbg::dtype::int8},         {torch::kInt16, tdbg::dtype::int16},
        {torch::kInt32, tdbg::dtype::int32},       {torch::kInt64, tdbg::dtype::int64},
        {torch::kUInt8, tdbg::dtype::uint8},       {torch::kBool, tdbg::dtype::boolean},
        {torch::kComplexFloat, tdbg::dtype::complex64}, {torch::kComplexDouble, tdbg::dtype::complex128},
    };
    const torch::Tensor source = torch::tensor({0.0, 1.0, 2.0, 0.0, 5.0, 7.0}).reshape({2, 3});
    for (const auto& [torch_type, tdbg_type] : types) {
        INFO(c10::toString(torch_type));
        CHECK(tdbg::dtype_from_torch(torch_type) == tdbg_type);
        CHECK(tdbg::torch_scalar_type(tdbg_type) == torch_type);
        const torch::Tensor t = source.to(torch_type);
        const tdbg::torch_tensor_view v(t);
        CHECK(v.value().type() == tdbg_type);
        CHECK(v.value().nbytes() == static_cast<std::size_t>(t.nbytes()));
        const torch::Tensor back = tdbg::to_torch(v.value());
        CHECK(back.scalar_type() == torch_type);
        CHECK(torch::equal(back, t));
    }

    CHECK_FALSE(tdbg::dtype_from_torch(torch::kQInt8).has_value());
    CHECK_FALSE(tdbg::torch_scalar_type(tdbg::dtype::uint32).has_value());
    CHECK_THROWS_AS(tdbg::torch_tensor_view(torch::empty({2}, torch::kComplexHalf)), tdbg::error);
    CHECK_THROWS_AS(tdbg::torch_tensor_view(torch::Tensor()), tdbg::error);
    CHECK_THROWS_AS(tdbg::to_torch(tdbg::tensor_value(std::vector<std::uint16_t>{1, 2})), tdbg::error);
}

TEST_CASE("torch_hook names module outputs and inputs per step as smdebug does") {
    CHECK(tdbg::detail::python_class_name("(anonymous namespace)::Net") == "Net");
    CHECK(tdbg::detail::python_class_name("torch::nn::CrossEntropyLossImpl") == "CrossEntropyLoss");
    CHECK(tdbg::detail::python_class_name("app::Outer<int, std::vector<float> >::BlockImpl") == "Block");
    CHECK(tdbg::detail::python_class_name("Impl") == "Impl");
    CHECK(tdbg::torch_class_name(*torch::nn::Linear(2, 2)) == "Linear");

    temp_dir dir("libtorch_names");
    tdbg::hook_options options = options_every(dir, 1);
    options.save_all = true; // every tensor offered is saved
    tdbg::hook hook(options);
    tdbg::torch_hook torch_hook(hook);

    torch::nn::Sequential seq(torch::nn::Linear(4, 5), torch::nn::ReLU(), torch::nn::Linear(5, 2));
    torch_hook.register_module(*seq);
    CHECK(torch_hook.parameter_names() == std::vector<std::string>{"Sequential_0.weight", "Sequential_0.bias",
                                                                   "Sequential_2.weight", "Sequential_2.bias"});
    CHECK(torch_hook.module_name(*seq) == "Sequential");
    CHECK(torch_hook.module_name(*seq->ptr(1)) == "1");
    // smdebug refuses a module registered twice; so does tdbg, and a part of a registered one.
    CHECK_THROWS_AS(torch_hook.register_module(*seq), tdbg::config_error);
    CHECK_THROWS_AS(torch_hook.register_module(*seq->ptr(0), "Other"), tdbg::config_error);
    const torch::nn::Linear unregistered(1, 1);
    CHECK_THROWS_AS(torch_hook.module_name(*unregistered), tdbg::config_error);

    // A parameter shared by two submodules is saved once, under its first name.
    struct tied : torch::nn::Module {
        explicit tied(const torch::nn::Linear& shared) {
            register_module("encoder", shared);
            register_module("decoder", shared);
        }
    };
    const torch::nn::Linear shared(3, 3);
    const tied model(shared);
    torch_hook.register_module(model, "Tied");
    CHECK(torch_hook.parameter_names().size() == 6);
    CHECK(torch_hook.parameter_names()[4] == "Tied_encoder.weight");
    CHECK(torch_hook.parameter_names()[5] == "Tied_encoder.bias");

    const torch::Tensor x = torch::randn({2, 4});
    hook.set_mode(tdbg::mode::train);
    for (int step = 0; step < 2; ++step) {
        torch_hook.begin_step();
        CHECK(torch_hook.save_input(*seq, x) == "Sequential_input_0");
        const torch::Tensor first = seq->forward(x);
        const torch::Tensor again = seq->forward(x + 1);
        // The module called twice in the step: its second output gets the next index.
        CHECK(torch_hook.save_output(*seq, first) == "Sequential_output_0");
        CHECK(torch_hook.save_output(*seq, again) == "Sequential_output_1");
        CHECK(torch_hook.save_outputs(*seq->ptr(1), {first, again}) ==
              std::vector<std::string>{"1_output_0", "1_output_1"});
        CHECK(torch_hook.save_inputs("CrossEntropyLoss", {first, torch::tensor({0, 1})}) ==
              std::vector<std::string>{"CrossEntropyLoss_input_0", "CrossEntropyLoss_input_1"});
        CHECK(torch_hook.record_tensor_value("mse", first.pow(2).mean()) == "mse_output_0");
        CHECK(torch_hook.record_loss("l1", first.abs().mean()) == "l1_output_0");
    }
    hook.close();
    CHECK_THROWS_AS(torch_hook.save_output(*seq, x), tdbg::error); // the hook is closed

    const auto trial = tdbg::create_trial((dir.path() / "run").string());
    for (const std::int64_t step : {0, 1}) {
        const auto names = trial.tensor_names(step);
        for (const char* name : {"Sequential_input_0", "Sequential_output_0", "Sequential_output_1", "1_output_0",
                                 "1_output_1", "CrossEntropyLoss_input_1", "mse_output_0", "l1_output_0",
                                 "Tied_encoder.weight", "Sequential_2.bias"}) {
            INFO(name << " at step " << step);
            CHECK(std::find(names.begin(), names.end(), name) != names.end());
        }
    }
    CHECK(trial.tensor("CrossEntropyLoss_input_1").value(1).type() == tdbg::dtype::int64);
    // record_loss makes a loss of a name the losses regex misses; the loss inputs stay out.
    CHECK(trial.tensor_names(std::nullopt, tdbg::mode::global, std::nullopt, "losses") ==
          std::vector<std::string>{"l1_output_0"});
}

// The README's GAN pattern (issue 55): a torch_hook per model over one hook, each recording its
// model's losses under one name. Each torch_hook used to number outputs from 0, so the
// generator's BCELoss_output_0 took the name of the discriminator's and was dropped at every step.
TEST_CASE("torch_hooks of one hook share each step's output numbers: a GAN keeps its three losses") {
    torch::manual_seed(55);
    temp_dir dir("libtorch_gan_losses");
    tdbg::hook_options options = options_every(dir, 1);

    torch::nn::Sequential generator(torch::nn::Linear(4, 8), torch::nn::ReLU(), torch::nn::Linear(8, 2));
    torch::nn::Sequential discriminator(torch::nn::Linear(2, 8), torch::nn::LeakyReLU(), torch::nn::Linear(8, 1),
                                        torch::nn::Sigmoid());
    torch::optim::SGD g_optimizer(generator->parameters(), torch::optim::SGDOptions(0.05));
    torch::optim::SGD d_optimizer(discriminator->parameters(), torch::optim::SGDOptions(0.05));
    const auto bce = [](const torch::Tensor& p, const torch::Tensor& target) {
        return torch::nn::functional::binary_cross_entropy(p, target);
    };

    constexpr std::int64_t steps = 8;
    constexpr std::int64_t batch = 16;
    std::map<std::pair<std::int64_t, std::string>, float> recorded; // (step, name) -> the loss recorded
    {
        tdbg::hook hook(options);
        tdbg::torch_hook d_hook(hook);
        tdbg::torch_hook g_hook(hook);
        d_hook.register_module(*discriminator, "Discriminator");
        g_hook.register_module(*generator, "Generator");
        hook.set_mode(tdbg::mode::train);
        for (std::int64_t step = 0; step < steps; ++step) {
            hook.begin_step();
            d_hook.save_parameters();
            g_hook.save_parameters();
            const torch::Tensor real = torch::randn({batch, 2}) * 0.5 + 2.0;
            const torch::Tensor fake = generator->forward(torch::randn({batch, 4}));

            d_optimizer.zero_grad();
            const torch::Tensor d_real = bce(discriminator->forward(real), torch::ones({batch, 1}));
            const std::string d_real_name = d_hook.record_loss("BCELoss", d_real);
            d_real.backward();
            const torch::Tensor d_fake = bce(discriminator->forward(fake.detach()), torch::zeros({batch, 1}));
            const std::string d_fake_name = d_hook.record_loss("BCELoss", d_fake);
            d_fake.backward();
            d_hook.after_backward();
            d_optimizer.step();

            g_optimizer.zero_grad();
            const torch::Tensor g_loss = bce(discriminator->forward(fake), torch::ones({batch, 1}));
            const std::string g_loss_name = g_hook.record_loss("BCELoss", g_loss);
            g_loss.backward();
            g_hook.after_backward();
            g_optimizer.step();

            // Numbered in the order recorded, as one torch_hook over both models would, from 0 at
            // every step: the names say which loss is which, the same at every step.
            INFO("step " << step);
            CHECK(d_real_name == "BCELoss_output_0");
            CHECK(d_fake_name == "BCELoss_output_1");
            CHECK(g_loss_name == "BCELoss_output_2");
            recorded[{step, d_real_name}] = d_real.item<float>();
            recorded[{step, d_fake_name}] = d_fake.item<float>();
            recorded[{step, g_loss_name}] = g_loss.item<float>();
        }
        hook.close();
    }
    REQUIRE(recorded.size() == 3 * steps); // no name taken twice in a step

    const auto trial = tdbg::create_trial((dir.path() / "run").string());
    CHECK(trial.tensor_names(std::nullopt, tdbg::mode::global, std::nullopt, "losses") ==
          std::vector<std::string>{"BCELoss_output_0", "BCELoss_output_1", "BCELoss_output_2"});
    std::size_t found = 0;
    for (const auto& [key, value] : recorded) {
        const auto& [step, name] = key;
        INFO(name << " at step " << step);
        const tdbg::tensor_value saved = trial.tensor(name).value(step);
        REQUIRE(saved.type() == tdbg::dtype::float32);
        CHECK(saved.dimension() == 0);
        CHECK(saved.data_as<float>()[0] == value);
        ++found;
    }
    CHECK(found == 24);
}

TEST_CASE("each hook numbers its own outputs: a torch_hook over another hook starts again from 0") {
    temp_dir dir("libtorch_two_hooks");
    tdbg::hook_options first_options = options_every(dir, 1);
    tdbg::hook_options second_options = first_options;
    second_options.out_dir = (dir.path() / "second").string();
    tdbg::hook first(first_options);
    tdbg::hook second(second_options);
    tdbg::torch_hook on_first(first);
    tdbg::torch_hook also_on_first(first);
    tdbg::torch_hook on_second(second);
    const torch::Tensor loss = torch::tensor(0.5F);
    for (int step = 0; step < 2; ++step) {
        first.begin_step();
        second.begin_step();
        CHECK(on_first.record_loss("MSELoss", loss) == "MSELoss_output_0");
        CHECK(on_second.record_loss("MSELoss", loss) == "MSELoss_output_0");
        CHECK(also_on_first.record_loss("MSELoss", loss) == "MSELoss_output_1");
        // Each prefix counts on its own, inputs apart from outputs.
        CHECK(also_on_first.save_inputs("MSELoss", {loss, loss}) ==
              std::vector<std::string>{"MSELoss_input_0", "MSELoss_input_1"});
        CHECK(on_first.record_tensor_value("MSELoss", loss) == "MSELoss_output_2");
    }
    first.close();
    second.close();
    const auto trial = tdbg::create_trial((dir.path() / "run").string());
    CHECK(trial.tensor_names(1, tdbg::mode::global, std::nullopt, "losses") ==
          std::vector<std::string>{"MSELoss_output_0", "MSELoss_output_1", "MSELoss_output_2"});
    CHECK(tdbg::create_trial((dir.path() / "second").string()).tensor_names(1) ==
          std::vector<std::string>{"MSELoss_output_0"});
}

TEST_CASE("torch_hook writes the run Python smdebug wrote for the pytorch_mlp fixture, name for name") {
    const auto fixtures = tdbg::test::fixtures_dir();
    const auto reference = tdbg::create_trial((fixtures / "pytorch_mlp").string());

    // The fixture's job (fixtures README): MLP 8-16-3 with ReLU "act", CrossEntropyLoss, SGD 0.1,
    // 40 TRAIN steps of 32, then 10 EVAL steps of 16 without gradients; TRAIN saved every 5th
    // step, EVAL every 2nd; relu_activations "^act_output_" reductions and shape only.
    torch::manual_seed(3);
    temp_dir dir("libtorch_fixture");
    tdbg::hook_options options;
    options.out_dir = (dir.path() / "run").string();
    options.save_config = tdbg::save_config(); // PREDICT and GLOBAL unset, as the fixture's
    options.save_config.set(tdbg::mode::train, tdbg::save_config_mode{5, {}, 0, std::nullopt});
    options.save_config.set(tdbg::mode::eval, tdbg::save_config_mode{2, {}, 0, std::nullopt});
    options.include_collections = {"weights", "biases", "gradients", "losses", "relu_activations"};
    tdbg::collection grads("gradients");
    grads.set_reduction_config(tdbg::reduction_config::parse("min,max,mean,std,variance,l2_norm,abs_mean", true));
    tdbg::collection relu("relu_activations");
    relu.include("^act_output_");
    relu.set_reduction_config(tdbg::reduction_config::parse("mean,max,std,variance,l2_norm,abs_l1_norm", false, true));
    options.collections = {grads, relu};

    auto net = std::make_shared<mlp>(8, 16, 3);
    torch::nn::CrossEntropyLoss criterion;
    torch::optim::SGD optimizer(net->parameters(), torch::optim::SGDOptions(0.1));
    const data_set data = make_data(256, 8, 3);
    {
        tdbg::hook hook(options);
        tdbg::torch_hook torch_hook(hook);
        torch_hook.register_module(*net, "MLP");
        const auto run = [&](std::int64_t batch, std::int64_t first) {
            torch_hook.begin_step();
            const torch::Tensor x = data.x.narrow(0, first % 256, batch);
            const torch::Tensor y = data.y.narrow(0, first % 256, batch);
            const torch::Tensor a = net->act(net->fc1(x));
            torch_hook.save_output(*net->act, a);
            const torch::Tensor loss = criterion(net->fc2(a), y);
            torch_hook.record_loss(*criterion, loss);
            return loss;
        };
        hook.set_mode(tdbg::mode::train);
        for (std::int64_t step = 0; step < 40; ++step) {
            const torch::Tensor loss = run(32, step * 32);
            optimizer.zero_grad();
            loss.backward();
            torch_hook.after_backward();
            optimizer.step();
        }
        hook.set_mode(tdbg::mode::eval);
        const torch::NoGradGuard no_grad;
        for (std::int64_t step = 0; step < 10; ++step) {
            (void)run(16, step * 16);
        }
        hook.close();
    }

    const auto ours = tdbg::create_trial((dir.path() / "run").string());
    REQUIRE(ours.tensor_names() == reference.tensor_names());
    for (const tdbg::mode m : {tdbg::mode::train, tdbg::mode::eval, tdbg::mode::global}) {
        CHECK(ours.steps(m) == reference.steps(m));
        CHECK(ours.tensor_names(std::nullopt, m) == reference.tensor_names(std::nullopt, m));
    }
    for (const auto& name : reference.tensor_names()) {
        INFO(name);
        const auto mine = ours.tensor(name);
        const auto theirs = reference.tensor(name);
        for (const tdbg::mode m : {tdbg::mode::train, tdbg::mode::eval}) {
            const auto steps = theirs.steps(m);
            REQUIRE(mine.steps(m) == steps);
            for (const std::int64_t step : steps) {
                CHECK(mine.shape(step, m) == theirs.shape(step, m));
            }
        }
    }
    for (const auto& [name, spec] : reference.collections()) {
        INFO("collection " << name);
        REQUIRE(ours.collections().count(name) == 1);
        const auto& mine = ours.collection(name);
        CHECK(mine.tensor_names == spec.tensor_names);
        CHECK(mine.include_regex == spec.include_regex);
        CHECK(mine.save_config == spec.save_config);
        CHECK(mine.reduction_config == spec.reduction_config);
    }
}
