// daqnet — plan, simulate and benchmark event-building networks.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "evb/config.hpp"

namespace daqnet::evb {

/// A value of run.cfg as read, before it is stored in a Config.
struct ConfigValue {
  long long integer = 0;
  unsigned long long seed = 0;
  double number = 0;
  bool boolean = false;
  std::string text;
  std::vector<double> numbers;
  std::vector<std::string> texts;
};

/// One key of the event builder's run description (run.cfg): its type, default, limits,
/// unit and meaning. This table is the one description of the configuration: daqnet-evb
/// reads run.cfg through it (Config::parse), the protocol simulation too, and the Python
/// package builds the scenario's [bench] keys, writes run.cfg and documents the keys from
/// it (daqnet._core.evb.config_keys()), so no default or limit is written twice.
struct ConfigKey {
  enum class Kind { integer, number, boolean, text, choice, seed, number_list, text_list };
  std::string name;
  Kind kind;
  std::string default_text;  ///< as written in run.cfg
  double minimum, maximum;   ///< inclusive, for integers, numbers and each list item
  std::vector<std::string> choices;
  std::string unit;  ///< bytes, seconds, Hz, ... ("" for counts and names)
  std::string doc;
  /// Where a scenario gives it: "bench.credits", or another section's key for the ones
  /// daqnet derives ("workload.schedule"), or "" for test hooks and per-run values (tcp_token).
  std::string scenario;
  void (*store)(Config&, const ConfigValue&);
};

/// Every key, in the order run.cfg lists them.
const std::vector<ConfigKey>& config_keys();

/// Every key's value as Config::parse reads `text` (defaults for the keys it leaves out),
/// after all its checks (ConfigError naming `path`, line and key): what daqnet-evb would run
/// with, for the Python package to check the run.cfg it writes.
std::map<std::string, ConfigValue> read_config_values(const std::string& text, const std::string& path);

}  // namespace daqnet::evb
