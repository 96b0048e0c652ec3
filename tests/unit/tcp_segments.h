// How many TCP segments with data a connected socket has received (the kernel's
// tcpi_data_segs_in). Apart from the tests that use it because <linux/tcp.h>, which
// has the field, cannot be included beside <netinet/tcp.h>, which httplib includes.
#pragma once

namespace harness {

// -1 when the kernel does not say.
long data_segments_received(int fd);

}  // namespace harness
