#!/usr/bin/env python3
"""Writes the seed corpora of the wire targets (corpus/wire_frame,
corpus/wire_messages): frames sealed as lib/preflight/wire.cpp seals them,
under wire_frame.cpp's fixed key and nonces, and the answers nodes send, as
encode_kv writes them. Run it again when the wire format changes."""
import hashlib
import hmac
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))
KEY, SN, CN = b"k" * 32, b"s" * 16, b"c" * 16
CLIENT = 1


def kv(d):
    return "".join(f"{k}={v}\n" for k, v in sorted(d.items())).encode()


def frame(typ, seq, payload):
    session = hmac.new(KEY, b"gangway-preflight-2 session" + SN + CN, hashlib.sha256).digest()
    mac = hmac.new(session, b"gangway-preflight-2 frame" + bytes([CLIENT]) + struct.pack(">Q", seq) + bytes([typ]) + payload,
                   hashlib.sha256).digest()
    body = bytes([typ]) + struct.pack(">Q", seq) + payload + mac
    return struct.pack(">I", len(body)) + body


card = {"card.node_rank": 0, "card.node": "n0", "card.hostname": "n0", "card.data_iface": "eth1",
        "card.data_addr": "198.18.0.1", "card.data_port": 29501, "card.gpus": 8, "card.version.driver": "550.54.15",
        "card.nics": 1, "card.nic.0.name": "mlx5_0", "card.nic.0.kind": "ib", "card.nic.0.state": "ACTIVE",
        "card.nic.0.rate_mbps": 200000, "card.nic.0.addrs": "198.18.0.1,fe80::1"}
reach = {"n": 2, "r.0.ok": 1, "r.0.ms": 0.25, "r.0.error": "", "r.1.ok": 0, "r.1.ms": 0, "r.1.error": "connect timed out"}
bw = {"rx_ok": 1, "rx_bps": 1.2e9, "rx_error": "", "tx_ok": 1, "tx_error": ""}
rdma = {"ok": 1, "error": "", "bps": 2.4e10, "q.lid": 7, "q.qpn": 1234, "q.psn": 99, "q.rkey": 5, "q.addr": 140000000,
        "q.len": 1048576, "q.gid": "fe80:0000:0000:0000:0000:0000:0000:0001", "q.mtu": 4096}
nccl = {"ok": 1, "error": "", "seconds": 0.0042, "data_ok": 1}
failed = {"ok": 0, "error": "ncclSystemError", "seconds": 0, "data_ok": 0}

seeds = {"wire_messages": {"card": kv(card), "reach": kv(reach), "bw": kv(bw), "rdma": kv(rdma), "nccl": kv(nccl),
                           "nccl-failed": kv(failed)},
         "wire_frame": {"hello": frame(1, 1, kv(card)), "reach": frame(5, 1, kv(reach)), "empty": frame(7, 1, b""),
                        "escaped": kv({"error": "a%3Db%0Ac", "x": "%25"})}}
for target, files in seeds.items():
    os.makedirs(os.path.join(here, "corpus", target), exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(here, "corpus", target, name), "wb") as f:
            f.write(data)
