#pragma once
/// \file
/// The base of an abstract class used only through pointers and references (a backend's
/// reader, the storage and device interfaces): never copied or moved, destroyed through a
/// pointer to it. Deriving from it says so once instead of in five declarations a class.

namespace tdbg::detail {

/// Not copyable, not movable, with a virtual destructor.
class interface_base {
public:
    interface_base() = default;
    interface_base(const interface_base&) = delete;
    interface_base& operator=(const interface_base&) = delete;
    interface_base(interface_base&&) = delete;
    interface_base& operator=(interface_base&&) = delete;
    virtual ~interface_base() = default;
};

} // namespace tdbg::detail
