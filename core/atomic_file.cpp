#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace evalrun {

std::optional<std::string> WriteFileAtomically(const std::string& path, std::string_view text) {
  return WriteFileAtomically(path, [text](const TextSink& sink) { sink(text); });
}

std::optional<std::string> WriteFileAtomically(
    const std::string& path, const std::function<void(const TextSink&)>& produce) {
  static std::atomic<int> counter{0};
  const std::string temp = path + ".tmp-" + std::to_string(getpid()) + "-" +
                           std::to_string(counter.fetch_add(1));
  // An existing file keeps its permissions; a new one gets 0644 less the umask, as ofstream did.
  mode_t mode = 0644;
  struct stat existing {};
  if (stat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode)) mode = existing.st_mode & 07777;
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return std::string(std::strerror(errno));
  const auto fail = [&](int error) -> std::optional<std::string> {
    close(fd);
    unlink(temp.c_str());
    return std::string(std::strerror(error));
  };
  if (mode != 0644) fchmod(fd, mode);  // open() applied the umask
  int write_error = 0;
  const auto write_all = [&](std::string_view text) {
    size_t done = 0;
    while (write_error == 0 && done < text.size()) {
      const ssize_t n = write(fd, text.data() + done, text.size() - done);
      if (n < 0) {
        if (errno != EINTR) write_error = errno;
        continue;
      }
      done += static_cast<size_t>(n);
    }
  };
  try {
    produce(write_all);
  } catch (...) {  // nothing half-made is left behind
    close(fd);
    unlink(temp.c_str());
    throw;
  }
  if (write_error != 0) return fail(write_error);
  if (fsync(fd) != 0) return fail(errno);
  if (close(fd) != 0) {
    const int error = errno;
    unlink(temp.c_str());
    return std::string(std::strerror(error));
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(temp.c_str());
    return std::string(std::strerror(error));
  }
  return std::nullopt;
}

}  // namespace evalrun
