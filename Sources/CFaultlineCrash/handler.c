#include "faultline_crash.h"
