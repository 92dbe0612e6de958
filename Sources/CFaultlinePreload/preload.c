#include "faultline_preload.h"
