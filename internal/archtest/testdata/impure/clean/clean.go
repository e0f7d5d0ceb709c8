// Package clean is pure and imports only the standard library.
package clean

import _ "strings"
