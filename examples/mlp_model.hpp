#pragma once
// The small MLP the example trainers share (train_mlp.cpp, mpi/train_mpi.cpp),
// written by hand over xtensor: smdebug's PyTorch example shape, fc1
// Linear(8,16) -> ReLU -> fc2 Linear(16,3), CrossEntropyLoss, SGD, and a
// synthetic data set labelled by a random linear teacher. Kept in one place so
// that both trainers (and the MPI test, which recomputes losses from saved
// weights) run exactly the same arithmetic.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <random>
#include <vector>

#include <xtensor/xtensor.hpp>

namespace mlp_example {

inline constexpr std::size_t inputs = 8;
inline constexpr std::size_t hidden = 16;
inline constexpr std::size_t classes = 3;
inline constexpr std::size_t points = 512;
inline constexpr std::size_t batch = 32;
inline constexpr float learning_rate = 0.1F;

using matrix = xt::xtensor<float, 2>;
using vector = xt::xtensor<float, 1>;

/// y = x . w^T + b   (x: batch x in, w: out x in, as torch.nn.Linear keeps it)
inline matrix linear(const matrix& x, const matrix& w, const vector& b) {
    matrix y = matrix::from_shape({x.shape(0), w.shape(0)});
    for (std::size_t r = 0; r < x.shape(0); ++r) {
        for (std::size_t o = 0; o < w.shape(0); ++o) {
            float s = b(o);
            for (std::size_t k = 0; k < x.shape(1); ++k) {
                s += x(r, k) * w(o, k);
            }
            y(r, o) = s;
        }
    }
    return y;
}

struct mlp {
    matrix w1, w2;
    vector b1, b2;
};

struct gradients {
    matrix w1, w2;
    vector b1, b2;
};

struct forward_pass {
    matrix h; // fc1 output
    matrix a; // relu output
    matrix probs; // softmax(fc2 output)
    float loss = 0;
    float accuracy = 0;
};

/// Inputs and their labels.
struct dataset {
    matrix x;
    std::vector<int> labels;
};

/// `points` normal inputs, each labelled with the class a random linear teacher scores highest.
inline dataset make_dataset(std::mt19937& rng) {
    std::normal_distribution<float> normal(0.0F, 1.0F);
    dataset d{matrix::from_shape({points, inputs}), std::vector<int>(points)};
    for (auto& v : d.x) {
        v = normal(rng);
    }
    matrix teacher = matrix::from_shape({classes, inputs});
    for (auto& v : teacher) {
        v = normal(rng);
    }
    const matrix scores = linear(d.x, teacher, xt::zeros<float>({classes}));
    for (std::size_t r = 0; r < points; ++r) {
        d.labels[r] = static_cast<int>(std::distance(
            &scores(r, 0), std::max_element(&scores(r, 0), &scores(r, 0) + static_cast<std::ptrdiff_t>(classes))));
    }
    return d;
}

/// The `step`-th batch of `batch` rows drawn in order, cycling, from the
/// `count` rows of `data` that start at row `first` (a data-parallel rank's shard).
inline dataset make_batch(const dataset& data, std::size_t first, std::size_t count, long step) {
    const std::size_t start = (static_cast<std::size_t>(step) * batch) % count;
    dataset b{matrix::from_shape({batch, inputs}), std::vector<int>(batch, 0)};
    for (std::size_t r = 0; r < batch; ++r) {
        const std::size_t src = first + (start + r) % count;
        for (std::size_t k = 0; k < inputs; ++k) {
            b.x(r, k) = data.x(src, k);
        }
        b.labels[r] = data.labels[src];
    }
    return b;
}

inline mlp init_model(std::mt19937& rng) {
    // torch.nn.Linear's default: uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    auto uniform = [&](std::size_t fan_in) {
        const float bound = 1.0F / std::sqrt(static_cast<float>(fan_in));
        return std::uniform_real_distribution<float>(-bound, bound);
    };
    mlp m{matrix::from_shape({hidden, inputs}), matrix::from_shape({classes, hidden}), vector::from_shape({hidden}),
          vector::from_shape({classes})};
    auto d1 = uniform(inputs);
    auto d2 = uniform(hidden);
    for (auto& v : m.w1) {
        v = d1(rng);
    }
    for (auto& v : m.b1) {
        v = d1(rng);
    }
    for (auto& v : m.w2) {
        v = d2(rng);
    }
    for (auto& v : m.b2) {
        v = d2(rng);
    }
    return m;
}

inline forward_pass forward(const mlp& m, const matrix& x, const std::vector<int>& labels) {
    forward_pass f;
    f.h = linear(x, m.w1, m.b1);
    f.a = xt::maximum(f.h, 0.0F);
    f.probs = linear(f.a, m.w2, m.b2);
    const std::size_t n = x.shape(0);
    std::size_t correct = 0;
    for (std::size_t r = 0; r < n; ++r) {
        float top = f.probs(r, 0);
        std::size_t argmax = 0;
        for (std::size_t c = 1; c < classes; ++c) {
            if (f.probs(r, c) > top) {
                top = f.probs(r, c);
                argmax = c;
            }
        }
        float total = 0;
        for (std::size_t c = 0; c < classes; ++c) {
            f.probs(r, c) = std::exp(f.probs(r, c) - top);
            total += f.probs(r, c);
        }
        for (std::size_t c = 0; c < classes; ++c) {
            f.probs(r, c) /= total;
        }
        f.loss -= std::log(std::max(f.probs(r, static_cast<std::size_t>(labels[r])), 1e-30F));
        correct += argmax == static_cast<std::size_t>(labels[r]) ? 1 : 0;
    }
    f.loss /= static_cast<float>(n);
    f.accuracy = static_cast<float>(correct) / static_cast<float>(n);
    return f;
}

inline gradients backward(const mlp& m, const matrix& x, const std::vector<int>& labels, const forward_pass& f) {
    const std::size_t n = x.shape(0);
    matrix dlogits = f.probs;
    for (std::size_t r = 0; r < n; ++r) {
        dlogits(r, static_cast<std::size_t>(labels[r])) -= 1.0F;
    }
    dlogits /= static_cast<float>(n);
    gradients g{xt::zeros<float>({hidden, inputs}), xt::zeros<float>({classes, hidden}), xt::zeros<float>({hidden}),
                xt::zeros<float>({classes})};
    matrix dh = xt::zeros<float>({n, hidden});
    for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t c = 0; c < classes; ++c) {
            const float d = dlogits(r, c);
            g.b2(c) += d;
            for (std::size_t j = 0; j < hidden; ++j) {
                g.w2(c, j) += d * f.a(r, j);
                dh(r, j) += d * m.w2(c, j);
            }
        }
        for (std::size_t j = 0; j < hidden; ++j) {
            dh(r, j) = f.h(r, j) > 0.0F ? dh(r, j) : 0.0F;
            g.b1(j) += dh(r, j);
            for (std::size_t k = 0; k < inputs; ++k) {
                g.w1(j, k) += dh(r, j) * x(r, k);
            }
        }
    }
    return g;
}

} // namespace mlp_example
