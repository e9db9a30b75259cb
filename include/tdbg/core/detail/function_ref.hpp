#pragma once
/// \file
/// A non-owning reference to a callable: a pointer to it and a function that
/// calls it. What a non-template function takes where a template would take
/// `F&&`, so that the function is compiled once whatever the caller passes;
/// the callable must outlive the call it is passed to.

#include <memory>
#include <type_traits>
#include <utility>

namespace tdbg::detail {

template <class Signature>
class function_ref;

template <class R, class... Args>
class function_ref<R(Args...)> {
public:
    template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, function_ref> &&
                                                std::is_invocable_r_v<R, F&, Args...>>>
    // NOLINTNEXTLINE(bugprone-forwarding-reference-overload): constrained against function_ref itself
    function_ref(F&& f) noexcept // NOLINT(google-explicit-constructor): converts like std::function
        : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
          call_([](void* object, Args... args) -> R {
              return (*static_cast<std::add_pointer_t<std::remove_reference_t<F>>>(object))(
                  std::forward<Args>(args)...);
          }) {}

    R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

private:
    void* object_;
    R (*call_)(void*, Args...);
};

} // namespace tdbg::detail
