// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <stdexcept>
#include <string>

namespace daqnet {

/// Bad input: an impossible fabric, a malformed table, an unknown name.
/// The message is one line meant for the user (it names the parameter, file or line);
/// the Python layer shows it as is, without a traceback.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace daqnet
