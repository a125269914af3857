/* version: the one place pgolab's version string lives. */
#ifndef PGOLAB_VERSION_H
#define PGOLAB_VERSION_H

#define PGOLAB_VERSION "0.1.0"

#endif
