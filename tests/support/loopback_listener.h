#pragma once
// A TCP port listening on the host's 127.0.0.1 that nothing accepts on: code that connects to it
// shows that it reached the host's network (a sandbox given the network) or that it did not (the
// sandbox's own namespace). Connections complete in the kernel's backlog; the port closes with
// the object.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace evalrun::testing {

class LoopbackListener {
 public:
  LoopbackListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), length) != 0 || listen(fd_, 8) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      return;
    }
    port_ = std::to_string(ntohs(address.sin_port));
  }
  LoopbackListener(const LoopbackListener&) = delete;
  LoopbackListener& operator=(const LoopbackListener&) = delete;
  ~LoopbackListener() {
    if (fd_ >= 0) close(fd_);
  }

  bool ok() const { return !port_.empty(); }
  const std::string& port() const { return port_; }

  // A shell command that prints REACHED and exits 0 when node connects to the port, else prints
  // the error's code (ECONNREFUSED) and exits 1.
  std::string NodeProbe() const {
    return "node -e \"require('net').connect(" + port_ +
           ", '127.0.0.1').on('connect', () => { console.log('REACHED'); process.exit(0); })"
           ".on('error', (e) => { console.log(e.code); process.exit(1); })\"";
  }

 private:
  int fd_ = -1;
  std::string port_;
};

}  // namespace evalrun::testing
