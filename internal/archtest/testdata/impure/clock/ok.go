package clock

import _ "os"
