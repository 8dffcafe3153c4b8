package case06

import ()
