#include "tcp_segments.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

namespace harness {

long data_segments_received(int fd) {
  tcp_info info{};
  socklen_t size = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0 ||
      size < offsetof(tcp_info, tcpi_data_segs_in) + sizeof info.tcpi_data_segs_in)
    return -1;
  return static_cast<long>(info.tcpi_data_segs_in);
}

}  // namespace harness
