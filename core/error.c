/* SPDX-License-Identifier: Apache-2.0 */
#include "backdrop-private.h"

#include <stdarg.h>
#include <stdio.h>

bd_status
bd_error_set (bd_error *error, bd_status status, const char *format, ...)
{
	if (error) {
		va_list args;
		va_start (args, format);
		error->status = status;
		vsnprintf (error->message, sizeof error->message, format, args);
		va_end (args);
	}
	return status;
}

const char *
bd_status_name (bd_status status)
{
	switch (status) {
	case BD_OK:                   return "ok";
	case BD_ERR_INVALID_ARGUMENT: return "invalid argument";
	case BD_ERR_IO:               return "input/output error";
	case BD_ERR_FORMAT:           return "bad model file";
	case BD_ERR_NO_MEMORY:        return "out of memory";
	case BD_ERR_TOO_LARGE:        return "too large";
	case BD_ERR_DEVICE:           return "device error";
	case BD_ERR_CANCELLED:        return "cancelled";
	}
	return "unknown status";
}

const char *
bd_device_name (bd_device device)
{
	switch (device) {
	case BD_DEVICE_AUTO: return "auto";
	case BD_DEVICE_CPU:  return "cpu";
	case BD_DEVICE_CUDA: return "cuda";
	}
	return "unknown";
}
