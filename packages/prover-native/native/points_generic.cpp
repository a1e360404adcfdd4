// The zkey point check on the portable kernel (see points.hpp).
#define MZK_KERNEL generic
#include "zkey_points.hpp"

namespace mzk {
CheckZkeyPoints checkZkeyPointsGeneric() { return &generic::checkZkeyPoints; }
}  // namespace mzk
