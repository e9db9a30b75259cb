// A file compiled against the engine (tdbg::compiled) that includes the libtorch integration,
// in a program linked without the integration's part (tdbg::libtorch_compiled): its link must
// fail, naming what to link (the part guard of tdbg/integrations/libtorch.hpp). Built only by
// the test "libtorch: a program that uses torch_hook without the integration's part fails to
// link, naming the target to link".
#include "tdbg/integrations/libtorch.hpp"

int main() { return 0; }
