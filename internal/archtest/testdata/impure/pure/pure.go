// Package pure claims to be pure but reaches host through mid.
package pure

import _ "example.com/impure/mid"
