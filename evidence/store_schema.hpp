#pragma once

#include <span>

#include "evidence/database.hpp"

namespace blaster {

// The store's schema, one step per version, oldest first. Append new versions; never edit an
// applied one: databases in the field were built by it.
std::span<const migration> store_schema();

// PRAGMA application_id of a blaster database ('blst'), set from version 2 on; a database with
// another id belongs to another program.
inline constexpr int store_application_id = 0x626c7374;

}  // namespace blaster
