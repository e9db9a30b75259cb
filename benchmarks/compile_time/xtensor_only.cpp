// The yardstick: a trainer file that uses xtensor and nothing of tdbg.
#include <xtensor/xarray.hpp>

int main() {
    xt::xarray<float> w = xt::xarray<float>::from_shape({4, 4});
    w.fill(1.0F);
    return static_cast<int>(w(0, 0));
}
