#pragma once
// What makes two endpoints "the same model" for a run over several endpoints (docs/serving.md,
// "Several endpoints"): the facts a ServerInfo (plugins/server_probe.h) holds that decide the
// answers and the speed, compared in a fixed order. Pure: tests feed ServerInfos.
#include <string>
#include <utility>
#include <vector>

#include "plugins/server_probe.h"

namespace evalrun {

// One fact about a server: its name as the messages say it ("model", "server", "build",
// "context", "weights file", "weights size", "parameters", "chat template") and its value as
// text ("" when the server does not report it).
using IdentityFact = std::pair<std::string, std::string>;

// The facts of `server`, in the order above: the model id it serves, its kind, build, context
// (tokens, per slot on llama.cpp), the weights' file name (llama.cpp /props model_path, SGLang
// /get_server_info model_path, vLLM /v1/models root; the file name only, as two machines keep
// their models in different folders), their size in bytes and parameter count (llama.cpp
// /v1/models meta.size and meta.n_params), and the chat template's fnv1a64 (llama.cpp).
std::vector<IdentityFact> ServerIdentity(const ServerInfo& server);

// How `other` differs from `first`, e.g. "model 'b' (http://127.0.0.1:8080: 'a'), context 8,192
// (http://127.0.0.1:8080: 4,096)", named by `first_url`; "" when they agree. The model and the
// server kind are always compared; the other facts only where both servers report them.
std::string IdentityDifference(const ServerInfo& first, const ServerInfo& other,
                               const std::string& first_url);

}  // namespace evalrun
