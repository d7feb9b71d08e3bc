#pragma once
// One RAII owner per curl handle (STYLE.md 11). Internal to plugins/: nothing outside this folder
// includes curl.
#include <memory>

#include <curl/curl.h>

namespace evalrun::curl {

struct EasyDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
struct MultiDeleter {
  void operator()(CURLM* h) const { curl_multi_cleanup(h); }
};
struct SlistDeleter {
  void operator()(curl_slist* h) const { curl_slist_free_all(h); }
};

using Easy = std::unique_ptr<CURL, EasyDeleter>;
using Multi = std::unique_ptr<CURLM, MultiDeleter>;
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

// curl_global_init once per process, before any handle is made (thread-safe through a
// function-local static).
void EnsureGlobalInit();

}  // namespace evalrun::curl
