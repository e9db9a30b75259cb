// A minimal trainer file: opens a hook, saves one xarray, closes.
#include <tdbg/hook/hook.hpp>
#include <xtensor/xarray.hpp>

int main(int argc, char** argv) {
    tdbg::hook_options options;
    options.out_dir = argc > 1 ? argv[1] : "run";
    tdbg::hook hook(options);
    hook.begin_step();
    xt::xarray<float> w = xt::xarray<float>::from_shape({4, 4});
    w.fill(1.0F);
    hook.save_tensor("w", w);
    hook.close();
    return 0;
}
