"""Deliberately vulnerable code for scangate's scanner tests. Never run it."""
import hashlib
import pickle
import subprocess

import yaml
from flask import Flask, request

app = Flask(__name__)
API_TOKEN = "ghp_EQi2y0ASonGKRpr5R99JAj31dG9MSq3zBpP5"  # fake, generated for the tests


@app.route("/run")
def run():
    return subprocess.check_output(request.args["cmd"], shell=True)


@app.route("/load")
def load():
    return str(pickle.loads(request.data))


def config(text):
    return yaml.load(text)


def digest(data):
    return hashlib.md5(data).hexdigest()


def ping(host):
    subprocess.call("ping -c 1 " + host, shell=True)  # nosec B602
    subprocess.call("ping -c 2 " + host, shell=True)  # nosemgrep


if __name__ == "__main__":
    app.run(host="0.0.0.0", debug=True)
