# Deliberately insecure configuration for scangate's scanner tests.
resource "aws_s3_bucket" "data" {
  bucket = "scangate-fixture-data"
  acl    = "public-read"
}

resource "aws_security_group" "open" {
  name = "scangate-fixture-open"

  ingress {
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}
