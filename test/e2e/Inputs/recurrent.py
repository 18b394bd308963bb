#!/usr/bin/python3
# recurrent.py - writes recurrent models (PyTorch's own LSTM, GRU and RNN
# modules, and a CRNN text recognizer's head) exported by PyTorch, with
# PyTorch's results, in ONNX's test layout.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Usage: recurrent.py OUT_DIR

Cases: lstm (two bidirectional layers, sequence-first, symbolic batch, the
output sequence), lstm_state (batch-first, its last hidden state), gru
(two layers, batch-first, symbolic batch; PyTorch exports
linear_before_reset), rnn (tanh, bidirectional), crnn (a conv feature
extractor, a bidirectional LSTM over the columns and a linear classifier
with log-softmax, as CRNN text recognizers are built).
"""
import sys

import torch
from torch import nn

from export_cases import write_case


class Output(nn.Module):
    """Output `index` of a recurrent module (0: the sequence; 1: the last
    hidden state)."""

    def __init__(self, module, index=0):
        super().__init__()
        self.module = module
        self.index = index

    def forward(self, x):
        out = self.module(x)[self.index]
        return out[0] if isinstance(out, tuple) else out


class CRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 16, 3, padding=1)
        self.pool = nn.MaxPool2d((8, 1))
        self.rnn = nn.LSTM(16, 32, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(64, 11)

    def forward(self, x):
        features = self.pool(torch.relu(self.conv(x))).squeeze(2)
        sequence, _ = self.rnn(features.permute(0, 2, 1))
        return self.fc(sequence).log_softmax(-1)


CASES = {
    "lstm": (Output(nn.LSTM(16, 24, num_layers=2, bidirectional=True)),
             [(9, 2, 16), (9, 3, 16)], {1: "batch"}),
    "lstm_state": (Output(nn.LSTM(16, 32, batch_first=True), 1),
                   [(1, 7, 16)], None),
    "gru": (Output(nn.GRU(16, 32, num_layers=2, batch_first=True)),
            [(2, 7, 16), (1, 7, 16)], {0: "batch"}),
    "rnn": (Output(nn.RNN(8, 12, bidirectional=True)), [(6, 2, 8)], None),
    "crnn": (CRNN(), [(1, 1, 8, 25)], None),
}


def main(out):
    torch.manual_seed(0)
    for name, (module, sizes, dynamic) in CASES.items():
        ops = write_case(out, name, module, sizes, dynamic)
        print(f"{name}: {' '.join(ops)}")

if __name__ == "__main__":
    main(sys.argv[1])
