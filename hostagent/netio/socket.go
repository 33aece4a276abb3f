package netio

// SocketStats are a SocketConn's counters. ByType arrays are indexed by
// the transport header's type (1 DATA .. 7 RTX; 0: not a transport packet).
// TxByType and TxBytes count what was handed to Send; TxDatagrams what the
// kernel accepted, TxErrors what it refused.
type SocketStats struct {
	TxDatagrams uint64    `json:"tx_datagrams"`
	TxBytes     uint64    `json:"tx_bytes"` // UDP payload bytes
	TxCalls     uint64    `json:"tx_calls"` // sendmmsg calls
	TxErrors    uint64    `json:"tx_errors"`
	TxByType    [8]uint64 `json:"tx_by_type"`
	RxDatagrams uint64    `json:"rx_datagrams"`
	RxBytes     uint64    `json:"rx_bytes"`
	RxCalls     uint64    `json:"rx_calls"` // recvmmsg calls that returned datagrams
	RxTruncated uint64    `json:"rx_truncated"`
	RxCE        uint64    `json:"rx_ce"`
	RxByType    [8]uint64 `json:"rx_by_type"`
	// RxDropped is the kernel's count of datagrams dropped because the
	// receive buffer was full (SO_RXQ_OVFL), as of the last receive.
	RxDropped uint64 `json:"rx_dropped"`
	// LastTxError is the last error a send returned.
	LastTxError string `json:"last_tx_error,omitempty"`
}
